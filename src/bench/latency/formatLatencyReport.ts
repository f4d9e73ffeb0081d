import type { LatencyBenchReport, LatencySummaryRow } from './LatencyBenchReport.js';

/** Name of a scenario in the table. @internal */
export function latencyScenarioLabel(row: Pick<LatencySummaryRow, 'scenario'>): string {
  return row.scenario === 'B' ? 'B in-order, prefetch 2' : 'C out-of-order, defaults';
}

/**
 * The report as Markdown: a table of medians, the ratios the issue asks for, and where the
 * JSON and the chart went.
 *
 * @internal
 */
export function formatLatencyReport(report: LatencyBenchReport): string {
  const { settings } = report;
  const fixed = (x: number | undefined, digits: number): string =>
    x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);
  const lines = [
    `bench latency: ${report.dataset.samples} samples of ${(report.dataset.meanBytes / 1e3).toFixed(0)} kB, ` +
      `batches of ${settings.batchSize}, median of ${settings.runs} run(s), every route through toxiproxy ` +
      `(${settings.jitter}); congested route: ${settings.congested.rttMs} ms round trip, ` +
      `${settings.congested.megabytesPerSecond} MB/s`,
    '',
    '| scenario | routes | RTT ms | samples/s | MB/s | batch wait p50 ms | p99 ms | loader CPU s/GB | loader peak RSS MiB |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...report.summary.map(
      (r) =>
        `| ${latencyScenarioLabel(r)} | ${r.routes === 'main' ? 'main' : 'main + congested'} | ${r.rttMs} | ` +
        `${Math.round(r.samplesPerSecond)} | ${r.megabytesPerSecond.toFixed(1)} | ` +
        `${r.waitMs.p50.toFixed(1)} | ${r.waitMs.p99.toFixed(1)} | ${fixed(r.loaderCpuSecondsPerGB, 1)} | ` +
        `${fixed(r.loaderPeakRssBytes === undefined ? undefined : r.loaderPeakRssBytes / 2 ** 20, 0)} |`,
    ),
    '',
  ];
  const { ratios } = report;
  if (ratios.cHighOverC0) {
    lines.push(
      `C(${ratios.cHighOverC0.highRttMs} ms) / C(0 ms): ${ratios.cHighOverC0.ratio.toFixed(2)} (target >= 0.9)`,
    );
  }
  if (ratios.cOverBCongested !== undefined) {
    lines.push(
      `C / B with the congested route: ${ratios.cOverBCongested.toFixed(2)} (target >= 2)`,
    );
  }
  lines.push(`figures: ${report.jsonPath}`, `chart: ${report.svgPath}`, '');
  return lines.join('\n');
}
