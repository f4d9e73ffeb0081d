import type { LatencySummaryRow } from './summarizeLatencyRuns.js';
import type { LatencyBenchReport } from './runLatencyBench.js';
import type { TrainerPace } from './LatencyBenchOptions.js';

/** How the paced trainer was paced, in words. */
function trainerPaceText(pace: TrainerPace): string {
  return 'samplesPerSecond' in pace
    ? `${pace.samplesPerSecond} samples/s`
    : `${Math.round(100 * pace.share)}% of the round's C at 0 ms (with the congested route: ` +
        `${pace.congestedSamplesPerSecond} samples/s)`;
}

/** Name of a scenario in the table. @internal */
export function latencyScenarioLabel(row: Pick<LatencySummaryRow, 'scenario'>): string {
  return row.scenario === 'B' ? 'B in-order, prefetch 2' : 'C out-of-order, defaults';
}

const fixed = (x: number | undefined, digits: number): string =>
  x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);

/**
 * The summary as a Markdown table: throughput and waits at full speed, the paced trainer's
 * waits and stalled share, the loader's CPU per GB and peak RSS. @internal
 */
export function latencyTable(rows: readonly LatencySummaryRow[]): string[] {
  return [
    '| placement | scenario | routes | RTT ms | samples/s | second half samples/s | first batch / at rate ms | MB/s | wait p50 / p99 ms | paced trainer wait p50 / p99 ms | trainer stalled | loader CPU s/GB | loader peak RSS MiB | loader / proxy CPU s | samples per CPU s (loader + proxy) | reads in flight mean / max |',
    '|---|---|---|---:|---:|---:|---|---:|---|---|---:|---:|---:|---|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.placement} | ${latencyScenarioLabel(r)} | ${r.routes === 'main' ? 'main' : 'main + congested'} | ${r.rttMs} | ` +
        `${Math.round(r.samplesPerSecond)} | ${fixed(r.ramp?.secondHalfSamplesPerSecond, 0)} | ` +
        `${fixed(r.firstBatchMs, 0)} / ${fixed(r.ramp?.atRateMs, 0)} | ` +
        `${r.megabytesPerSecond.toFixed(1)} | ` +
        `${r.waitMs.p50.toFixed(1)} / ${r.waitMs.p99.toFixed(1)} | ` +
        `${r.trainer ? `${r.trainer.waitMs.p50.toFixed(1)} / ${r.trainer.waitMs.p99.toFixed(1)}` : '-'} | ` +
        `${r.trainer ? `${(100 * r.trainer.stallFraction).toFixed(1)}%` : '-'} | ` +
        `${fixed(r.loaderCpuSecondsPerGB, 1)} | ` +
        `${fixed(r.loaderPeakRssBytes === undefined ? undefined : r.loaderPeakRssBytes / 2 ** 20, 0)} | ` +
        `${fixed(r.loaderCpuSeconds, 1)} / ${fixed(r.proxyCpuSeconds, 1)} | ` +
        `${fixed(r.samplesPerLoaderAndProxyCpuSecond, 0)} | ` +
        `${r.readsInFlight ? `${r.readsInFlight.mean.toFixed(0)} / ${r.readsInFlight.max.toFixed(0)}` : '-'} |`,
    ),
  ];
}

/**
 * The report as Markdown: a table of medians, the ratios the issue asks for per placement,
 * and where the JSON and the chart went. @internal
 */
export function formatLatencyReport(report: LatencyBenchReport): string {
  const { settings } = report;
  const lines = [
    `bench latency: ${report.dataset.samples} samples of ${(report.dataset.meanBytes / 1e3).toFixed(0)} kB, ` +
      `batches of ${settings.batchSize}, median of ${settings.runs} run(s), every route through toxiproxy ` +
      `(${settings.jitter}); congested route: ${settings.congested.rttMs} ms round trip, ` +
      `${settings.congested.megabytesPerSecond} MB/s` +
      (settings.trainer ? `; paced trainer: ${trainerPaceText(settings.trainer)}` : '') +
      (settings.pinning
        ? `; pinned: database and toxiproxy on CPU ${settings.pinning.database}, loaders and trainers on CPU ${settings.pinning.loaderAndClient}`
        : ''),
    '',
    ...latencyTable(report.summary),
    '',
  ];
  for (const [placement, ratios] of Object.entries(report.ratios)) {
    if (ratios.cHighOverC0) {
      lines.push(
        `${placement}: C(${ratios.cHighOverC0.highRttMs} ms) / C(0 ms): ${ratios.cHighOverC0.ratio.toFixed(2)} (target >= 0.95)` +
          (ratios.cHighOverC0.secondHalfRatio === undefined
            ? ''
            : `; over the second half of each run: ${ratios.cHighOverC0.secondHalfRatio.toFixed(2)}`),
      );
    }
    if (ratios.cHighTrainer) {
      const t = ratios.cHighTrainer;
      lines.push(
        `${placement}: C's paced trainer at ${t.rttMs} ms: stalled ${(100 * t.stallFraction).toFixed(1)}% ` +
          `(target < 1%)` +
          (t.stallHalves
            ? ` (first half ${(100 * t.stallHalves[0]).toFixed(1)}%, second ${(100 * t.stallHalves[1]).toFixed(1)}%)`
            : '') +
          `, batch wait p99 ${t.p99Ms.toFixed(1)} ms (target <= 30)` +
          (t.atZero
            ? `; at 0 ms the same trainer stalled ${(100 * t.atZero.stallFraction).toFixed(1)}%, ` +
              `p99 ${t.atZero.p99Ms.toFixed(1)} ms`
            : ''),
      );
    }
    if (ratios.cOverBCongested !== undefined) {
      lines.push(
        `${placement}: C / B with the congested route: ${ratios.cOverBCongested.toFixed(2)} (target >= 2)`,
      );
    }
    if (ratios.cCongestedTrainerP99Ms !== undefined) {
      lines.push(
        `${placement}: C's paced-trainer batch wait p99 with the congested route: ${ratios.cCongestedTrainerP99Ms.toFixed(1)} ms (target <= 30)`,
      );
    }
  }
  for (const note of report.notes) lines.push(`note: ${note}`);
  lines.push(`figures: ${report.jsonPath}`, `chart: ${report.svgPath}`, '');
  return lines.join('\n');
}
