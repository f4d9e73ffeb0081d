import type { ConcurrencyBenchReport } from './runConcurrencyBench.js';

/**
 * The report of `bench concurrency` as Markdown: one row per k with medians over the runs,
 * the exactly-once verdict, and where the JSON went.
 */
export function formatConcurrencyReport(report: ConcurrencyBenchReport): string {
  const { settings, dataset } = report;
  const int = (x: number): string => Math.round(x).toLocaleString('en-US');
  const fixed = (x: number | undefined, digits: number): string =>
    x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);
  const lines = [
    `${dataset.samples.toLocaleString('en-US')} samples of ${(dataset.meanBytes / 1e3).toFixed(0)} kB, ` +
      `batch ${settings.batchSize}, ${settings.epochs} epoch(s) per run, out of order with the ` +
      `loader's defaults (prefetch ${settings.serverDefaultPrefetch}, at most ` +
      `${settings.serverMaxInFlightPerStream} reads in flight per stream); medians of ` +
      `${settings.runs} interleaved run(s); ${settings.clients}`,
    '',
    '| streams | samples/s | MB/s | x k=' +
      `${report.scalingBase} | per stream samples/s min / median | batch wait p50 / p99 ms | ` +
      'CPU s: loader / client / db | loader CPU s per GB | loader peak RSS MiB | exactly once |',
    '|--:|--:|--:|--:|---|---|---|--:|--:|---|',
  ];
  for (const row of report.summary) {
    lines.push(
      `| ${row.streams} | ${int(row.samplesPerSecond)} | ${row.megabytesPerSecond.toFixed(0)} | ` +
        `${row.scaling.toFixed(2)} | ${int(row.perStreamSamplesPerSecond.min)} / ` +
        `${int(row.perStreamSamplesPerSecond.median)} | ${row.waitMs.p50.toFixed(0)} / ` +
        `${row.waitMs.p99.toFixed(0)} | ${fixed(row.cpuSeconds.loader, 2)} / ` +
        `${row.cpuSeconds.client.toFixed(2)} / ${fixed(row.cpuSeconds.db, 2)} | ` +
        `${fixed(row.loaderCpuSecondsPerGB, 1)} | ` +
        `${row.loaderPeakRssBytes === undefined ? '-' : (row.loaderPeakRssBytes / 2 ** 20).toFixed(0)} | ` +
        `${row.exactlyOnce ? 'yes' : 'NO'} |`,
    );
  }
  const failed = report.runs.filter((r) => !r.exactlyOnce.ok);
  lines.push('');
  lines.push(
    failed.length === 0
      ? `exactly once: in every run and epoch the ranks together received each of the ` +
          `${dataset.samples} samples once`
      : `exactly once FAILED in ${failed.length} run(s): ` +
          failed
            .map(
              (r) =>
                `k=${r.streams} run ${r.run + 1} (${r.exactlyOnce.duplicates} duplicates, ` +
                `${r.exactlyOnce.missing} missing, ${r.exactlyOnce.unexpected} unexpected)`,
            )
            .join(', '),
  );
  if (!settings.peakRssPerRun) {
    lines.push('loader peak RSS: could not be reset per run, so it spans the whole process');
  }
  if (settings.cpuProfileDir) lines.push(`loader CPU profile: ${settings.cpuProfileDir}`);
  lines.push(`figures: ${report.jsonPath}`);
  return `${lines.join('\n')}\n`;
}
