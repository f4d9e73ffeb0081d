import type { ScaleBenchReport } from './runScaleBench.js';

/**
 * The scale benchmark's figures as Markdown: one row per split size (medians), the RSS ratio
 * against the target, and where the JSON is.
 */
export function formatScaleReport(report: ScaleBenchReport): string {
  const { settings, dataset } = report;
  const n = (x: number | undefined, digits = 0): string =>
    x === undefined || !Number.isFinite(x)
      ? '-'
      : x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  const lines = [
    `dataset ${dataset.name}: ${n(dataset.samples)} samples of ${settings.sampleBytes} B; ` +
      `batch ${settings.batchSize}, out-of-order, a fresh loader per run, medians of ${settings.runs}` +
      (settings.samplesPerRun === undefined
        ? ', one whole epoch per run'
        : `, the first ${n(settings.samplesPerRun)} samples of an epoch per run (equal stream length)`),
    '',
    '| split samples | loader peak RSS MiB | RSS before MiB | RSS growth MiB | loader CPU ms per batch | first batch ms | samples/s |',
    '|--:|--:|--:|--:|--:|--:|--:|',
    ...report.summary.map(
      (r) =>
        `| ${n(r.splitSamples)} | ${n(r.loaderPeakRssMiB, 1)} | ${n(r.loaderRssBeforeMiB, 1)} | ` +
        `${n(r.loaderRssGrowthMiB, 1)} | ${n(r.loaderCpuMsPerBatch, 2)} | ${n(r.firstBatchMs)} | ` +
        `${n(r.samplesPerSecond)} |`,
    ),
    '',
  ];
  const v = report.rss;
  if (v) {
    lines.push(
      `peak RSS ${n(v.largest)} / ${n(v.smallest)} samples: ${v.ratio.toFixed(3)} ` +
        `(target <= ${v.target.toFixed(2)}: ${v.met ? 'met' : 'NOT met'})`,
    );
  }
  lines.push(`figures: ${report.jsonPath}`, '');
  return lines.join('\n');
}
