import { median } from '../stream/stats.js';
import type { CpuSplit, IngestRunRecord } from './IngestBenchReport.js';

/**
 * Medians of the runs of each source and concurrency, in the order they first ran. Each figure
 * is its own median (the median rate need not come from the run with the median wall time); a
 * CPU figure missing from any run is null. @internal
 */
export function summarizeIngestRuns(runs: readonly IngestRunRecord[]) {
  const groups = new Map<string, IngestRunRecord[]>();
  for (const r of runs) {
    const key = `${r.source}|${r.concurrency}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  return [...groups.values()].map((rs) => {
    const m = (f: (r: IngestRunRecord) => number): number => median(rs.map(f));
    const split = (f: (r: IngestRunRecord) => CpuSplit): CpuSplit => ({
      loader: m((r) => f(r).loader),
      database: nullableMedian(rs.map((r) => f(r).database)),
      rest: nullableMedian(rs.map((r) => f(r).rest)),
    });
    const first = rs[0]!;
    return {
      source: first.source,
      concurrency: first.concurrency,
      runs: rs.length,
      samples: first.samples,
      bytes: first.bytes,
      samplesPerSecond: m((r) => r.samplesPerSecond),
      megabytesPerSecond: m((r) => r.megabytesPerSecond),
      wallSeconds: m((r) => r.wallSeconds),
      writeSeconds: m((r) => r.writeSeconds),
      cpuSeconds: split((r) => r.cpuSeconds),
      cores: split((r) => r.cores),
    };
  });
}

function nullableMedian(values: Array<number | null>): number | null {
  return values.some((v) => v === null) ? null : median(values as number[]);
}
