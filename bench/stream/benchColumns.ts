import cassandra from 'cassandra-driver';
import type { Placement } from './StreamBenchOptions.js';
import type { RunRecord } from './StreamBenchReport.js';
import { summarizePaired } from './summarizeMixing.js';

/** The columns `bench stream --columns` streams: a ~100 B caption and an int. */
export const BENCH_COLUMNS = { bench_caption: 'text', bench_n: 'int' } as const;

/** The goals: samples/s at least 0.9x, loader CPU per sample at most 1.1x. */
export const COLUMNS_RATE_GOAL = 0.9;
export const COLUMNS_CPU_GOAL = 1.1;

/** A caption of about 100 bytes, different for every sample. */
function caption(i: number): string {
  return (
    `a photograph, number ${String(i).padStart(6, '0')}, of something seen on a walk, ` +
    `kept for the benchmark`
  );
}

/**
 * Gives the benchmark's dataset {@link BENCH_COLUMNS} when it lacks them: adds them to its
 * metadata table and its info row, and writes every sample's values (its metadata rows, read
 * by a full scan). Idempotent: a dataset that has them with a value on every row is left as
 * it is.
 */
export async function prepareBenchColumns(
  client: cassandra.Client,
  dataset: string,
  log: (line: string) => void,
): Promise<void> {
  const info = await client.execute(
    `SELECT columns FROM ${dataset}.dataset_info WHERE dataset = ?`,
    [dataset],
    { prepare: true },
  );
  const have = (info.first()?.['columns'] ?? {}) as Record<string, string>;
  const missing = Object.entries(BENCH_COLUMNS).filter(([name]) => have[name] === undefined);
  for (const [name, type] of missing) {
    await client.execute(`ALTER TABLE ${dataset}.metadata ADD "${name}" ${type}`).catch((err) => {
      if (!/already exist|conflicts with an existing column/i.test(String(err))) throw err;
    });
  }
  const rows: { id: cassandra.types.Uuid; caption: string | null }[] = [];
  await new Promise<void>((resolve, reject) => {
    client.eachRow(
      `SELECT id, "bench_caption" FROM ${dataset}.metadata`,
      [],
      { prepare: true, autoPage: true },
      (_n, row) => rows.push({ id: row['id'], caption: row['bench_caption'] }),
      (err) => (err ? reject(err) : resolve()),
    );
  });
  const unwritten = rows.filter((r) => r.caption === null);
  if (unwritten.length > 0) {
    log(`bench stream --columns: writing 2 columns of ${unwritten.length} samples`);
  }
  const sorted = [...unwritten].sort((a, b) => a.id.toString().localeCompare(b.id.toString()));
  for (let at = 0; at < sorted.length; at += 64) {
    await Promise.all(
      sorted
        .slice(at, at + 64)
        .map((r, k) =>
          client.execute(
            `UPDATE ${dataset}.metadata SET "bench_caption" = ?, "bench_n" = ? WHERE id = ?`,
            [caption(at + k), at + k, r.id],
            { prepare: true },
          ),
        ),
    );
  }
  if (missing.length > 0) {
    await client.execute(
      `UPDATE ${dataset}.dataset_info SET columns = columns + ? WHERE dataset = ?`,
      [Object.fromEntries(missing), dataset],
      { prepare: true },
    );
  }
}

/** The columns scenario against the service without columns, per placement. @internal */
export function summarizeColumns(runs: readonly RunRecord[], placements: Placement[]) {
  return summarizePaired(runs, placements, 'service-columns', COLUMNS_RATE_GOAL).map(
    ({ other, ...row }) => ({
      ...row,
      columns: other.side,
      cpuGoal: COLUMNS_CPU_GOAL,
      meetsCpuGoal: row.loaderCpuRatio !== undefined && row.loaderCpuRatio <= COLUMNS_CPU_GOAL,
    }),
  );
}
