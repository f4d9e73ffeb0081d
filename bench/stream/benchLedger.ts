import cassandra from 'cassandra-driver';
import type { PhotoPresetName } from '../../src/datasets/photos/index.js';
import { localNodetool } from './localNodetool.js';
import type { Placement } from './StreamBenchOptions.js';
import type { RunRecord } from './StreamBenchReport.js';
import { summarizePaired } from './summarizeMixing.js';

/** The goals: samples/s with a job at least this share of the same stream without. */
export const LEDGER_RATE_GOALS: Record<PhotoPresetName, number> = {
  imagenet: 0.95,
  small: 0.9,
  // No goal of its own in the issue: the small payload's.
  tiny: 0.9,
};

/** The tables of the ledger, in the order the report shows them. */
export const LEDGER_TABLES = ['batches', 'appearances', 'jobs'] as const;

/** Longest keyspace name Cassandra takes. */
const MAX_KEYSPACE_LENGTH = 48;

/**
 * The keyspace the loader of `bench stream --ledger` records into: the dataset's name with
 * `_ledger`, so it is never the production ledger, a leftover of a killed run is the run's own
 * to drop, and whoever drops the dataset's `<name>_*` keyspaces drops it too.
 */
export function benchLedgerKeyspace(dataset: string): string {
  const keyspace = `${dataset}_ledger`;
  if (keyspace.length > MAX_KEYSPACE_LENGTH) {
    throw new Error(
      `--ledger records into keyspace ${keyspace}, over ${MAX_KEYSPACE_LENGTH} characters: ` +
        'name a shorter --dataset',
    );
  }
  return keyspace;
}

/** The job a ledger run names: unique per bench run, placement and round (or warm-up). */
export function benchJobId(runTag: string, placement: Placement, run: number | 'warmup'): string {
  return `bench-${runTag}-${placement}-${run}`;
}

/** Drops the bench's ledger keyspace (a busy node's schema change may take long). */
export async function dropLedgerKeyspace(client: cassandra.Client, keyspace: string) {
  await client.execute(`DROP KEYSPACE IF EXISTS ${keyspace}`, [], { readTimeout: 120_000 });
}

/** One table of the ledger as measured. */
export interface LedgerTableSize {
  rows: number;
  /** Sum of the rows' values as CQL returns them (every column of every row, uncompressed). */
  logicalBytes: number;
  /** Live SSTable bytes after a flush (every component, compressed); absent: not measured. */
  diskBytes?: number;
}

/** The ledger keyspace's size after the job runs (see {@link measureLedgerSize}). */
export interface LedgerSize {
  keyspace: string;
  /** Samples recorded: its sample index rows (one per sample sent, warm-up streams included). */
  samples: number;
  tables: Record<(typeof LEDGER_TABLES)[number], LedgerTableSize>;
  /** Bytes per recorded sample (each job streamed one epoch), by table and in all. */
  logicalBytesPerSample: { batches: number; appearances: number; total: number };
  diskBytesPerSample?: { batches: number; appearances: number; total: number };
  /** Why the on-disk size is missing (not the local node, nodetool failed). */
  diskNote?: string;
}

/**
 * The ledger keyspace's size: every row read back (counted, and its values summed: the
 * logical size), and, for the local node (`dbPid`), the live SSTable bytes per table after
 * `nodetool flush` (the on-disk size, compressed, with every SSTable component).
 */
export async function measureLedgerSize(
  client: cassandra.Client,
  keyspace: string,
  dbPid: number | undefined,
): Promise<LedgerSize> {
  const tables = {} as LedgerSize['tables'];
  for (const table of LEDGER_TABLES) tables[table] = await readBackTable(client, keyspace, table);
  let diskNote: string | undefined;
  if (dbPid === undefined) {
    diskNote = 'the database is not the local node: on-disk size not measured';
  } else {
    try {
      const disk = await liveBytesAfterFlush(dbPid, keyspace);
      for (const table of LEDGER_TABLES) {
        const bytes = disk[table];
        if (bytes === undefined)
          throw new Error(`nodetool tablestats lists no ${keyspace}.${table}`);
        tables[table].diskBytes = bytes;
      }
    } catch (err) {
      diskNote = `on-disk size not measured: ${err instanceof Error ? err.message : String(err)}`;
    }
  }
  const samples = tables.appearances.rows;
  const perSample = (pick: (t: LedgerTableSize) => number | undefined) => {
    const of = (t: LedgerTableSize): number => (pick(t) ?? Number.NaN) / samples;
    return {
      batches: of(tables.batches),
      appearances: of(tables.appearances),
      total: LEDGER_TABLES.reduce((sum, t) => sum + of(tables[t]), 0),
    };
  };
  return {
    keyspace,
    samples,
    tables,
    logicalBytesPerSample: perSample((t) => t.logicalBytes),
    ...(diskNote === undefined
      ? { diskBytesPerSample: perSample((t) => t.diskBytes) }
      : { diskNote }),
  };
}

/**
 * {@link measureLedgerSize} after the job runs of `runs`, checked: the ledger's sample rows
 * must be the samples those streams (and their warm-ups, and the loaders' `warmupSamples`)
 * received, or the loader did not record what it sent.
 */
export async function measureBenchLedger(
  client: cassandra.Client,
  keyspace: string,
  dbPid: number | undefined,
  runs: readonly RunRecord[],
  warmupSamples: number,
): Promise<LedgerSize> {
  const size = await measureLedgerSize(client, keyspace, dbPid);
  const sent = runs
    .filter((r) => r.scenario === 'service-ledger')
    .reduce((sum, r) => sum + r.samples + (r.warmupSamples ?? 0), warmupSamples);
  if (size.samples !== sent) {
    throw new Error(
      `the ledger holds ${size.samples} sample rows, but the job streams received ${sent} samples`,
    );
  }
  return size;
}

/** Every row of one table: how many, and the bytes of their values. */
async function readBackTable(
  client: cassandra.Client,
  keyspace: string,
  table: string,
): Promise<LedgerTableSize> {
  let rows = 0;
  let logicalBytes = 0;
  await new Promise<void>((resolve, reject) => {
    client.eachRow(
      `SELECT * FROM ${keyspace}.${table}`,
      [],
      { prepare: true, autoPage: true, fetchSize: 5000, readTimeout: 120_000 },
      (_n, row) => {
        rows++;
        for (const value of row.values()) logicalBytes += valueBytes(value);
      },
      (err) => (err ? reject(err) : resolve()),
    );
  });
  return { rows, logicalBytes };
}

/** Bytes of a value of the ledger's column types as the protocol sends it. @internal */
export function valueBytes(value: unknown): number {
  if (value === null || value === undefined) return 0;
  if (Buffer.isBuffer(value)) return value.length;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'boolean') return 1;
  // The ledger's numbers are all CQL int.
  if (typeof value === 'number') return 4;
  if (value instanceof Date) return 8;
  if (value instanceof cassandra.types.Uuid) return 16;
  if (Array.isArray(value)) return value.reduce((sum: number, v) => sum + valueBytes(v), 0);
  throw new Error(`the ledger holds a value of an unexpected type: ${String(value)}`);
}

/** Live SSTable bytes of each table of `keyspace` once its memtables are flushed. */
async function liveBytesAfterFlush(
  dbPid: number,
  keyspace: string,
): Promise<Record<string, number | undefined>> {
  const { nodetool, close } = await localNodetool(dbPid);
  try {
    await nodetool(['flush', keyspace]);
    const stats = JSON.parse(await nodetool(['tablestats', '-F', 'json', keyspace])) as Record<
      string,
      { tables?: Record<string, { space_used_live?: string | number }> }
    >;
    const tables = stats[keyspace]?.tables ?? {};
    return Object.fromEntries(
      Object.entries(tables).map(([name, t]) => {
        const bytes = Number(t.space_used_live);
        return [name, Number.isFinite(bytes) ? bytes : undefined];
      }),
    );
  } finally {
    await close();
  }
}

/**
 * The job runs against the same stream without a job, per placement: the paired summary
 * (ratios within each round, their median) with the rounds' lowest and highest ratio.
 * @internal
 */
export function summarizeLedger(
  runs: readonly RunRecord[],
  placements: Placement[],
  payload: PhotoPresetName,
) {
  return summarizePaired(runs, placements, 'service-ledger', LEDGER_RATE_GOALS[payload]).map(
    ({ other, ...row }) => ({
      ...row,
      job: other.side,
      minRatio: Math.min(...row.roundRatios),
      maxRatio: Math.max(...row.roundRatios),
    }),
  );
}
