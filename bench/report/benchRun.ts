import { reportPath, writeReportJson } from '../../test/support/index.js';
import { progressOrLog, type BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/**
 * Starts a benchmark run: its log and progress (silent by default), its clock (`seconds` since
 * the start), the pids of every child it spawns (`onSpawn`), for the no-leak checks, and
 * `writeReport`, which writes its JSON report.
 */
export function startBenchRun(options: {
  log?: ((line: string) => void) | undefined;
  progress?: BenchProgressFactory | undefined;
  signal?: AbortSignal | undefined;
}) {
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const childPids: number[] = [];
  const startedAt = new Date();
  const seconds = () => (performance.now() - started) / 1000;
  const progress = progressOrLog(options.progress, log);
  return {
    log,
    progress,
    signal: options.signal,
    startedAt,
    seconds,
    childPids,
    onSpawn: (pid: number) => void childPids.push(pid),
    /**
     * Measures every run of `plan` in order under one progress display (`label`, counted in
     * `unit`), checking for an abort before each and logging `describe` of each result.
     */
    measureEach: async <P, R>(
      label: string,
      unit: string,
      plan: readonly P[],
      measure: (planned: P) => Promise<R>,
      describe: (result: R, planned: P) => string,
    ): Promise<R[]> => {
      const results: R[] = [];
      const bar = progress(label, plan.length, unit);
      try {
        for (const planned of plan) {
          options.signal?.throwIfAborted();
          const result = await measure(planned);
          results.push(result);
          bar.update(results.length);
          bar.log(describe(result, planned));
        }
      } finally {
        bar.stop();
      }
      return results;
    },
    /**
     * Writes the report `<name>-<start>.json` into `outDir`: the run's start and seconds,
     * `body`, and its own path; returns it.
     */
    writeReport: async <B extends object>(name: string, outDir: string, body: B) => {
      const report = {
        startedAt: startedAt.toISOString(),
        seconds: seconds(),
        ...body,
        jsonPath: reportPath(outDir, name, startedAt),
      };
      await writeReportJson(report.jsonPath, report);
      return report;
    },
  };
}
