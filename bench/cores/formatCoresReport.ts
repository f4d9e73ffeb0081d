import type { CoresBenchReport } from './runCoresBench.js';

/**
 * The report of `bench cores` as Markdown: one row per worker count with medians over the
 * runs, the exactly-once verdict, and where the JSON went.
 */
export function formatCoresReport(report: CoresBenchReport): string {
  const { settings, dataset, environment } = report;
  const int = (x: number): string => Math.round(x).toLocaleString('en-US');
  const lines = [
    `${dataset.samples.toLocaleString('en-US')} samples of ${(dataset.meanBytes / 1e3).toFixed(0)} kB, ` +
      `${settings.streams} ranks of one job (one connection each), batch ${settings.batchSize}, ` +
      `${settings.epochs} epoch(s) per run, a fresh loader per run; medians of ${settings.runs} ` +
      `interleaved run(s); ${environment.cores} cores shared by the loader, the client and the ` +
      'database node',
    '',
    '| workers | samples/s | MB/s | x 1 worker | loader cores busy | CPU s: loader / client / db | ' +
      'loader CPU s per GB | RSS per worker MiB | exactly once |',
    '|--:|--:|--:|--:|--:|---|--:|--:|---|',
  ];
  for (const row of report.summary) {
    lines.push(
      `| ${row.workers} | ${int(row.samplesPerSecond)} | ${row.megabytesPerSecond.toFixed(0)} | ` +
        `${row.scaling.toFixed(2)} | ${row.loaderCoresBusy.toFixed(2)} | ` +
        `${row.cpuSeconds.loader.toFixed(2)} / ${row.cpuSeconds.client.toFixed(2)} / ` +
        `${row.cpuSeconds.db === undefined ? '-' : row.cpuSeconds.db.toFixed(2)} | ` +
        `${row.loaderCpuSecondsPerGB.toFixed(2)} | ${row.workerRssMiB.toFixed(0)} | ` +
        `${row.exactlyOnce ? 'yes' : 'NO'} |`,
    );
  }
  lines.push('');
  const spread = report.runs
    .filter((r) => r.workers > 1)
    .map((r) => `${r.workers} workers run ${r.run + 1}: ${r.streamsPerWorker.join('/')}`);
  if (spread.length > 0) lines.push(`streams per worker: ${spread.join('; ')}`);
  lines.push(`figures: ${report.jsonPath}`);
  return `${lines.join('\n')}\n`;
}
