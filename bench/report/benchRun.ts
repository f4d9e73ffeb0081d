import { progressOrLog, type BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/** What every benchmark run keeps from its start: its hooks, clock and children. */
export interface BenchRun {
  log: (line: string) => void;
  progress: BenchProgressFactory;
  signal: AbortSignal | undefined;
  startedAt: Date;
  /** Seconds since the start. */
  seconds: () => number;
  /** Pids of every child the run spawned, for the report and the no-leak checks. */
  childPids: number[];
  onSpawn: (pid: number) => void;
}

/** Starts a benchmark run: its log and progress (silent by default), clock and child list. */
export function startBenchRun(options: {
  log?: ((line: string) => void) | undefined;
  progress?: BenchProgressFactory | undefined;
  signal?: AbortSignal | undefined;
}): BenchRun {
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const childPids: number[] = [];
  return {
    log,
    progress: progressOrLog(options.progress, log),
    signal: options.signal,
    startedAt: new Date(),
    seconds: () => (performance.now() - started) / 1000,
    childPids,
    onSpawn: (pid) => void childPids.push(pid),
  };
}
