import { progressOrLog, type BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/**
 * Starts a benchmark run: its log and progress (silent by default), its clock (`seconds` since
 * the start) and the pids of every child it spawns (`onSpawn`), for the no-leak checks.
 */
export function startBenchRun(options: {
  log?: ((line: string) => void) | undefined;
  progress?: BenchProgressFactory | undefined;
  signal?: AbortSignal | undefined;
}) {
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
    onSpawn: (pid: number) => void childPids.push(pid),
  };
}
