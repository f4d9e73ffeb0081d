import type cassandra from 'cassandra-driver';
import { validateIdentifier } from '../schema/identifiers.js';
import { replicationCql, type Replication } from '../schema/replication.js';

/** The keyspace the ledger's tables are made in unless the loader is told another. */
export const DEFAULT_LEDGER_KEYSPACE = 'scylla_loader_ledger';

/** Days a ledger row is kept unless the loader is told otherwise. */
export const DEFAULT_LEDGER_TTL_DAYS = 90;

/**
 * Partitions of a job's sample index: a sample's appearances live in partition
 * (job, bucket of its id), so finding a sample is a one-partition read, and dropping a job
 * deletes this many partitions. 256 keeps a partition near 30 MB for ImageNet-1k x 90 epochs.
 */
export const LEDGER_BUCKETS = 256;

/**
 * Creates the ledger's keyspace and tables if absent (a no-op when they exist):
 *
 * - `jobs`: one row per job: the fingerprint of its fields, its sources, its epochs.
 * - `batches`: one row per batch sent, in partition (job, epoch), clustered by rank and batch
 *   index (with each sample's position in the rank's epoch and in the epoch's order, which a
 *   skip and a replay work from), so "one batch" and "a rank's batches of an epoch" are slices of one partition. A
 *   batch index can have several rows: one per world size, re-sharded segment (the job
 *   checkpoint an epoch was continued from) and stream that sent it; all but one are
 *   superseded.
 * - `appearances`: one row per sample sent, in partition (job, bucket of the sample id),
 *   clustered by sample id: every appearance of a sample in a job is a slice of one partition.
 */
export async function ensureLedgerSchema(
  client: cassandra.Client,
  keyspace: string,
  replication: Replication,
): Promise<void> {
  const ks = validateIdentifier(keyspace, 'ledger keyspace');
  await client.execute(
    `CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = ${replicationCql(replication)}`,
  );
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${ks}.jobs (job_id text PRIMARY KEY, fingerprint blob, ` +
      'source_datasets list<text>, source_splits list<text>, buckets int, epochs set<int>, ' +
      'created_at timestamp)',
  );
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${ks}.batches (job_id text, epoch int, rank int, ` +
      'batch_index int, world_size int, segment blob, stream_id timeuuid, ids blob, ' +
      'source_indexes blob, positions blob, epoch_positions blob, resume_token blob, ' +
      'sent_at timestamp, superseded boolean, skipped boolean, ' +
      'PRIMARY KEY ((job_id, epoch), rank, batch_index, world_size, segment, stream_id))',
  );
  await addMissingColumns(client, ks, 'batches', BATCH_COLUMNS_ADDED);
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${ks}.appearances (job_id text, bucket int, sample_id uuid, ` +
      'epoch int, rank int, batch_index int, world_size int, segment blob, stream_id timeuuid, ' +
      'position int, sent_at timestamp, PRIMARY KEY ((job_id, bucket), sample_id, epoch, rank, ' +
      'batch_index, world_size, segment, stream_id, position))',
  );
}

/** Columns of `batches` a ledger made before they existed lacks (name to CQL type). */
const BATCH_COLUMNS_ADDED: Readonly<Record<string, string>> = {
  positions: 'blob',
  epoch_positions: 'blob',
  skipped: 'boolean',
};

/**
 * Adds to an existing table the columns of `wanted` it lacks: `CREATE TABLE IF NOT EXISTS`
 * leaves a table made by an older loader as it was. Two loaders adding one at once is fine.
 */
async function addMissingColumns(
  client: cassandra.Client,
  ks: string,
  table: string,
  wanted: Readonly<Record<string, string>>,
): Promise<void> {
  const rs = await client.execute(
    'SELECT column_name FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
    [ks, table],
    { prepare: true },
  );
  const have = new Set(rs.rows.map((r) => r['column_name'] as string));
  for (const [name, type] of Object.entries(wanted)) {
    if (have.has(name)) continue;
    await client.execute(`ALTER TABLE ${ks}.${table} ADD ${name} ${type}`).catch((err: unknown) => {
      if (!/conflicts with an existing column|already exists/i.test((err as Error).message)) {
        throw err;
      }
    });
  }
}

/** The index partition of a sample id (16 bytes): its first four bytes modulo `buckets`. */
export function sampleBucket(id: Buffer, buckets: number): number {
  return id.readUInt32BE(0) % buckets;
}
