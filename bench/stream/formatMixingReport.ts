import type { StreamBenchReport } from './runStreamBench.js';

const num = (v: number | undefined, digits = 0): string =>
  v === undefined || !Number.isFinite(v)
    ? 'n/a'
    : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/**
 * The mixture of `bench stream --sources` against the single-source service as Markdown: a
 * heading, what the columns mean, and one table (what `--docs` writes under `mixing`); empty
 * when the run streamed no mixture.
 */
export function formatMixingReport(report: StreamBenchReport): string {
  const { mix } = report.settings;
  if (!mix || !report.mixing) return '';
  const weights = mix.sources.map((s) => num(s.weight, Number.isInteger(s.weight) ? 0 : 2));
  const lines = [
    `### Mixing: ${mix.sources.length} sources ${weights.join(':')} against one, ` +
      `${num(report.settings.samples)} samples per stream`,
    '',
    `Mixed: parts ${mix.sources.map((s) => s.split).join(', ')} of ${report.dataset.name} ` +
      `(${mix.sources.map((s) => num(s.size)).join(' / ')} samples, split set ${mix.name} ` +
      `${mix.created ? 'made by this run' : 'reused'}), weights ${weights.join(', ')}, repeat, ` +
      `samples_per_epoch ${num(report.settings.samples)}; single source: split all; both ` +
      'out-of-order with the default prefetch, through the same loader, next to each other in ' +
      `every round (alternating which goes first). Medians of ${report.settings.runs} round(s); ` +
      '× service: mixed over single-source samples/s within a round, median over rounds (each ' +
      `round's in brackets); goal: at least ${num(report.mixing[0]?.goal, 2)}.`,
    '',
    '| placement | stream | samples/s | MB/s | × service (per round) | goal | loader CPU s | ' +
      'loader CPU s per 1,000 samples | samples per source | batch wait p50 / p99 ms |',
    '|---|---|--:|--:|--:|---|--:|--:|--:|--:|',
  ];
  for (const row of report.mixing) {
    const { single, mixed } = row;
    const wait = (w: { p50: number; p99: number } | undefined): string =>
      w ? `${num(w.p50, 1)} / ${num(w.p99, 1)}` : '-';
    lines.push(
      `| ${row.placement} | single source (split all) | ${num(single.samplesPerSecond)} | ` +
        `${num(single.megabytesPerSecond)} | 1.00 | - | ${num(single.loaderCpuSeconds, 2)} | ` +
        `${num(single.loaderCpuSecondsPer1000Samples, 3)} | ${num(single.samples)} | ` +
        `${wait(single.waitMs)} |`,
      `| ${row.placement} | mixed (${weights.join(':')}) | ${num(mixed.samplesPerSecond)} | ` +
        `${num(mixed.megabytesPerSecond)} | ${num(row.ratio, 2)} ` +
        `(${row.roundRatios.map((r) => num(r, 2)).join(', ')}) | ` +
        `${row.meetsGoal ? 'met' : 'missed'} (≥ ${num(row.goal, 2)}) | ` +
        `${num(mixed.loaderCpuSeconds, 2)} | ${num(mixed.loaderCpuSecondsPer1000Samples, 3)}` +
        `${row.loaderCpuRatio === undefined ? '' : ` (× ${num(row.loaderCpuRatio, 2)})`} | ` +
        `${mixed.sourceSamples.map((n) => num(n)).join(' / ')} | ${wait(mixed.waitMs)} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
