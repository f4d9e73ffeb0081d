import cassandra from 'cassandra-driver';
import { QUERY_PROFILES } from '../db/consistency.js';
import { retryableDriverError } from '../db/retryableDriverError.js';
import { LoaderError } from '../errors/LoaderError.js';
import { retryBackoffMs } from '../fetch/retryBackoffMs.js';
import { quoteIdentifier } from '../schema/identifiers.js';
import type { BatchColumn, ColumnValue } from './BatchColumn.js';
import type { ColumnPlan } from './planColumns.js';

/**
 * Ids per query at most: ScyllaDB refuses an IN list over 100 partition keys by default
 * (`max_partition_key_restrictions_per_query`).
 */
export const COLUMN_READ_IDS = 100;

/** What a {@link ColumnReader} reads with. */
export interface ColumnReaderOptions {
  client: cassandra.Client;
  /** Each source's dataset (keyspace), in the stream's order. */
  datasets: readonly string[];
  plan: ColumnPlan;
  /** Attempts per query before the stream fails with UNAVAILABLE, and the first backoff. */
  readAttempts: number;
  retryBaseMs: number;
  signal: AbortSignal;
}

/** One sample of a batch, as far as its columns go. */
export interface ColumnKey {
  /** 16 UUID bytes. */
  id: Buffer;
  /** Index of the sample's source. */
  source: number;
}

/**
 * Reads the metadata columns of a batch's samples: one `WHERE id IN ?` query per source and
 * {@link COLUMN_READ_IDS} ids of the batch, all at once, over the metadata table (one small row
 * per sample, the same partition key as the sample's row). A batch costs one or two queries,
 * not one per sample, which is what keeps columns cheap beside the sample reads. A sample
 * without a metadata row, or of a source whose dataset lacks the column, gets null. Retryable
 * driver errors are retried with backoff; the `readAttempts`-th failure is UNAVAILABLE.
 */
export class ColumnReader {
  /** Each source's query, or undefined when its dataset has none of the columns. */
  readonly #queries: (string | undefined)[];
  /** Each source's columns, as indexes into the plan's columns, in its query's order. */
  readonly #indexes: number[][];

  constructor(private readonly opts: ColumnReaderOptions) {
    const { plan } = opts;
    this.#indexes = plan.present.map((names) =>
      names.map((n) => plan.columns.findIndex((c) => c.name === n)),
    );
    this.#queries = opts.datasets.map((dataset, s) => {
      const names = plan.present[s] ?? [];
      if (names.length === 0) return undefined;
      return (
        `SELECT id, ${names.map(quoteIdentifier).join(', ')} FROM ${dataset}.metadata ` +
        'WHERE id IN ?'
      );
    });
  }

  /** The plan's columns for `samples`, in their order. */
  async read(samples: readonly ColumnKey[]): Promise<BatchColumn[]> {
    const { columns } = this.opts.plan;
    const out: BatchColumn[] = columns.map((c) => ({
      name: c.name,
      type: c.type,
      values: new Array<ColumnValue>(samples.length).fill(null),
    }));
    // Positions in the batch of each source's samples, by id (an id appears once per source
    // in a batch, except in a mixture that repeats a source: all its positions get the row).
    const wanted = this.#queries.map(() => new Map<string, { id: Buffer; at: number[] }>());
    samples.forEach((s, i) => {
      if (this.#queries[s.source] === undefined) return;
      const key = s.id.toString('hex');
      const byId = wanted[s.source]!;
      const entry = byId.get(key);
      if (entry) entry.at.push(i);
      else byId.set(key, { id: s.id, at: [i] });
    });
    const reads: Promise<void>[] = [];
    wanted.forEach((byId, source) => {
      const ids = [...byId.values()].map((e) => e.id);
      for (let from = 0; from < ids.length; from += COLUMN_READ_IDS) {
        const chunk = ids.slice(from, from + COLUMN_READ_IDS);
        reads.push(
          this.#query(source, chunk).then((rows) => {
            const indexes = this.#indexes[source]!;
            for (const row of rows) {
              const id = (row['id'] as cassandra.types.Uuid).getBuffer().toString('hex');
              for (const at of byId.get(id)?.at ?? []) {
                indexes.forEach((c, k) => {
                  out[c]!.values[at] = columnValue(row.get(k + 1));
                });
              }
            }
          }),
        );
      }
    });
    await Promise.all(reads);
    return out;
  }

  async #query(source: number, ids: Buffer[]): Promise<cassandra.types.Row[]> {
    const query = this.#queries[source]!;
    const params = [ids.map((id) => new cassandra.types.Uuid(id))];
    for (let attempt = 1; ; attempt++) {
      this.opts.signal.throwIfAborted();
      try {
        const rs = await this.opts.client.execute(query, params, {
          prepare: true,
          isIdempotent: true,
          executionProfile: QUERY_PROFILES.sampleRead,
        });
        return rs.rows;
      } catch (err) {
        const why = retryableDriverError(err);
        if (why === undefined) throw err;
        if (attempt >= this.opts.readAttempts) {
          throw new LoaderError(
            'UNAVAILABLE',
            `reading the batch's metadata columns failed ${attempt} times: ${why}`,
            { cause: err },
          );
        }
        const ms = retryBackoffMs(attempt, this.opts.retryBaseMs);
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
    }
  }
}

/** A driver value as a column value: bigint columns' Long as bigint, absent as null. */
function columnValue(value: unknown): ColumnValue {
  if (value === null || value === undefined) return null;
  if (value instanceof cassandra.types.Long) return BigInt(value.toString());
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value;
  }
  return String(value);
}
