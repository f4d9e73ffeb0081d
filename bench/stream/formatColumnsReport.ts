import { COLUMNS_CPU_GOAL, COLUMNS_RATE_GOAL, BENCH_COLUMNS } from './benchColumns.js';
import type { StreamBenchReport } from './runStreamBench.js';

const num = (v: number | undefined, digits = 0): string =>
  v === undefined || !Number.isFinite(v)
    ? 'n/a'
    : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The columns comparison as Markdown (empty when the run streamed no columns). */
export function formatColumnsReport(report: StreamBenchReport): string {
  if (!report.columns || report.columns.length === 0) return '';
  const lines = [
    `### Metadata columns: ${Object.keys(BENCH_COLUMNS).join(' (text, ~100 B) and ')} (int) ` +
      'against none',
    '',
    'Both out-of-order with the default prefetch, through the same loader, next to each other in ' +
      `every round. Medians of ${report.settings.runs} round(s); ratios within a round, median ` +
      `over rounds (each round's in brackets); goals: samples/s ≥ ${COLUMNS_RATE_GOAL}×, loader ` +
      `CPU per sample ≤ ${COLUMNS_CPU_GOAL}×.`,
    '',
    '| placement | stream | samples/s | × (per round) | loader CPU s per 1,000 samples | × (per round) | goals |',
    '|---|---|--:|--:|--:|--:|---|',
  ];
  for (const row of report.columns) {
    const rounds = (xs: number[]): string => xs.map((x) => num(x, 2)).join(', ');
    lines.push(
      `| ${row.placement} | no columns | ${num(row.single.samplesPerSecond)} | 1.00 | ` +
        `${num(row.single.loaderCpuSecondsPer1000Samples, 3)} | 1.00 | - |`,
      `| ${row.placement} | 2 columns | ${num(row.columns.samplesPerSecond)} | ` +
        `${num(row.ratio, 2)} (${rounds(row.roundRatios)}) | ` +
        `${num(row.columns.loaderCpuSecondsPer1000Samples, 3)} | ` +
        `${num(row.loaderCpuRatio, 2)} (${rounds(row.roundLoaderCpuRatios)}) | ` +
        `rate ${row.meetsGoal ? 'met' : 'missed'}, CPU ${row.meetsCpuGoal ? 'met' : 'missed'} |`,
    );
  }
  return `${lines.join('\n')}\n`;
}
