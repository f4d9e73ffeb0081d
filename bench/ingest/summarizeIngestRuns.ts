import { median } from '../stream/stats.js';
import type { CpuSplit, IngestRunRecord } from './IngestBenchReport.js';

/**
 * Medians of the runs of each source, way and concurrency, in the order they first ran. Each
 * figure is its own median (the median rate need not come from the run with the median wall
 * time); a CPU figure missing from any run is null. Ratios are taken run by run against the
 * run of the same round, source and concurrency (`write-loop` for the ceiling, `folder` for
 * the CLI), so a noisy minute on the shared machine touches both sides of a ratio, and their
 * median is given. @internal
 */
export function summarizeIngestRuns(runs: readonly IngestRunRecord[]) {
  const groups = new Map<string, IngestRunRecord[]>();
  for (const r of runs) {
    const key = `${r.source}|${r.way}|${r.concurrency}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const partner = (r: IngestRunRecord, way: string): IngestRunRecord | undefined =>
    runs.find(
      (o) =>
        o.way === way &&
        o.source === r.source &&
        o.concurrency === r.concurrency &&
        o.run === r.run,
    );
  const ratio = (rs: IngestRunRecord[], way: string, f: (r: IngestRunRecord) => number) => {
    const values = rs.flatMap((r) => {
      const o = partner(r, way);
      return o && f(o) > 0 ? [f(r) / f(o)] : [];
    });
    return values.length > 0 ? median(values) : null;
  };
  return [...groups.values()].map((rs) => {
    const m = (f: (r: IngestRunRecord) => number): number => median(rs.map(f));
    const split = (f: (r: IngestRunRecord) => CpuSplit): CpuSplit => ({
      loader: m((r) => f(r).loader),
      database: nullableMedian(rs.map((r) => f(r).database)),
      rest: nullableMedian(rs.map((r) => f(r).rest)),
    });
    const first = rs[0]!;
    const dbPerSample = nullableMedian(
      rs.map((r) => (r.cpuSeconds.database === null ? null : r.cpuSeconds.database / r.samples)),
    );
    return {
      source: first.source,
      way: first.way,
      concurrency: first.concurrency,
      runs: rs.length,
      samples: first.samples,
      bytes: first.bytes,
      samplesPerSecond: m((r) => r.samplesPerSecond),
      megabytesPerSecond: m((r) => r.megabytesPerSecond),
      wallSeconds: m((r) => r.wallSeconds),
      cpuSeconds: split((r) => r.cpuSeconds),
      cores: split((r) => r.cores),
      /** Microseconds of ingesting-process CPU per sample. */
      loaderMicrosPerSample: m((r) => (r.cpuSeconds.loader / r.samples) * 1e6),
      /** Microseconds of database CPU per sample (null: not measured). */
      databaseMicrosPerSample: dbPerSample === null ? null : dbPerSample * 1e6,
      /** Samples/s against the write loop's of the same round (the ceiling). */
      vsWriteLoop: ratio(rs, 'write-loop', (r) => r.samplesPerSecond),
      /** Samples/s against `ingest` from files of the same round (the CLI). */
      vsFolder: ratio(rs, 'folder', (r) => r.samplesPerSecond),
    };
  });
}

function nullableMedian(values: Array<number | null>): number | null {
  return values.some((v) => v === null) ? null : median(values as number[]);
}
