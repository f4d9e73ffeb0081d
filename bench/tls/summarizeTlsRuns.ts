import { median } from '../stream/stats.js';
import type { TlsLegRun } from './TlsBenchReport.js';
import { tlsLegLabel, type TlsLegSpec } from './tlsLegs.js';

/** Goal of the issue: share of the plaintext throughput kept with TLS. */
export const TLS_THROUGHPUT_GOAL = 0.9;

/** Bytes in a GB (decimal, as network throughput is quoted). */
const GB = 1e9;

/**
 * Medians of each leg's runs, in the order of `legs` (legs without runs are left out). The
 * ratio to plaintext pairs runs: each run's rate over the plaintext rate of the same run
 * (legs interleaved, so the pair ran minutes apart at most), then the median of those, which
 * a machine whose load drifts between runs disturbs less than a ratio of medians would. @internal
 */
export function summarizeTlsRuns(legs: readonly TlsLegSpec[], runs: readonly TlsLegRun[]) {
  const rate = (r: TlsLegRun): number => r.bytes / r.wallSeconds;
  const plainRate = new Map(runs.filter((r) => r.leg === 'plaintext').map((r) => [r.run, rate(r)]));
  const summary = [];
  for (const leg of legs) {
    const mine = runs.filter((r) => r.leg === leg.name);
    if (mine.length === 0) continue;
    const perGB = (f: (r: TlsLegRun) => number | undefined): number | null => {
      const values = mine.map(f);
      if (values.some((v) => v === undefined)) return null;
      return median(values.map((v, i) => (GB * v!) / mine[i]!.bytes));
    };
    const rates = mine.map(rate);
    const ratios = mine.flatMap((r) => {
      const plain = plainRate.get(r.run);
      return plain === undefined || plain <= 0 ? [] : [rate(r) / plain];
    });
    summary.push({
      leg: leg.name,
      label: tlsLegLabel(leg),
      runs: mine.length,
      bytesPerSecond: median(rates),
      bytesPerSecondRange: [Math.min(...rates), Math.max(...rates)] as [number, number],
      samplesPerSecond: median(mine.map((r) => r.samples / r.wallSeconds)),
      cpuSecondsPerGB: {
        loader: perGB((r) => r.cpuSeconds.loader),
        client: perGB((r) => r.cpuSeconds.client)!,
        database: perGB((r) => r.cpuSeconds.database),
      },
      ratioToPlaintext: ratios.length === 0 ? null : median(ratios),
    });
  }
  return summary;
}

/** A leg's medians over its runs. */
export type TlsLegSummary = ReturnType<typeof summarizeTlsRuns>[number];
