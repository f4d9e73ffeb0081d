import { median } from '../stream/stats.js';
import type { ConcurrencyCpuSeconds, ConcurrencyRun } from './ConcurrencyBenchReport.js';

/**
 * One row per k, in increasing k: the median over that k's runs of every figure (per-stream
 * figures: per run the slowest and the median rank, then their medians), and the aggregate
 * samples/s over that of the smallest k. A figure missing from some runs (e.g. peak RSS where
 * it cannot be reset) is the median of the runs that have it, absent when none has. @internal
 */
export function summarizeConcurrencyRuns(runs: readonly ConcurrencyRun[]) {
  const ks = [...new Set(runs.map((r) => r.streams))].sort((a, b) => a - b);
  const rows = ks.map((streams) => {
    const mine = runs.filter((r) => r.streams === streams);
    const med = (f: (r: ConcurrencyRun) => number): number => median(mine.map(f));
    const medOpt = (f: (r: ConcurrencyRun) => number | undefined): number | undefined => {
      const values = mine.map(f).filter((v): v is number => v !== undefined);
      return values.length === 0 ? undefined : median(values);
    };
    const loader = medOpt((r) => r.cpuSeconds.loader);
    const db = medOpt((r) => r.cpuSeconds.db);
    const cpuSeconds: ConcurrencyCpuSeconds = {
      ...(loader === undefined ? {} : { loader }),
      ...(db === undefined ? {} : { db }),
      client: med((r) => r.cpuSeconds.client),
    };
    const perGB = medOpt((r) => r.loaderCpuSecondsPerGB);
    const rss = medOpt((r) => r.loaderPeakRssBytes);
    return {
      streams,
      runs: mine.length,
      samplesPerSecond: med((r) => r.samplesPerSecond),
      megabytesPerSecond: med((r) => r.megabytesPerSecond),
      perStreamSamplesPerSecond: {
        min: med((r) => Math.min(...r.perStreamSamplesPerSecond)),
        median: med((r) => median(r.perStreamSamplesPerSecond)),
      },
      waitMs: { p50: med((r) => r.waitMs.p50), p99: med((r) => r.waitMs.p99) },
      cpuSeconds,
      ...(perGB === undefined ? {} : { loaderCpuSecondsPerGB: perGB }),
      ...(rss === undefined ? {} : { loaderPeakRssBytes: rss }),
      scaling: Number.NaN,
      exactlyOnce: mine.every((r) => r.exactlyOnce.ok),
    };
  });
  const base = rows[0];
  for (const row of rows) row.scaling = row.samplesPerSecond / (base?.samplesPerSecond ?? NaN);
  return { summary: rows, scalingBase: base?.streams ?? Number.NaN };
}
