import cassandra from 'cassandra-driver';
import pMap from 'p-map';

const { Long } = cassandra.types;

/** Options of {@link scanTokenRanges}. */
export interface ScanOptions {
  keyspace: string;
  table: string;
  /** Columns to select; validated identifiers only (they are inlined in the statement). */
  columns: readonly string[];
  /** How many slices of the Murmur3 token ring to read (more slices, more parallelism). */
  segments?: number;
  /** How many slices are read at once. */
  concurrency?: number;
  /** Rows per page. */
  pageSize?: number;
  /** Called with every page of rows, in no particular order across slices. */
  onRows: (rows: cassandra.types.Row[]) => void;
  signal?: AbortSignal;
}

/**
 * Reads a whole table by splitting the Murmur3 token ring into slices and paging through
 * several slices at once. A single paged `SELECT` walks the ring one node at a time; slices
 * keep every replica busy and let a large table be read in bounded memory.
 */
export async function scanTokenRanges(
  client: cassandra.Client,
  options: ScanOptions,
): Promise<void> {
  const segments = options.segments ?? 64;
  const concurrency = options.concurrency ?? 8;
  const bounds = tokenBounds(segments);
  const cols = options.columns.join(', ');
  const base = `SELECT ${cols} FROM ${options.keyspace}.${options.table}`;
  // The first slice includes the ring's minimum; the others start just above their lower bound.
  const firstQuery = `${base} WHERE token(id) >= ? AND token(id) <= ?`;
  const query = `${base} WHERE token(id) > ? AND token(id) <= ?`;
  const pageSize = options.pageSize ?? 5000;
  // When one slice fails, the slices still being paged stop at their next page instead of
  // handing rows to a caller whose scan has already failed.
  const failed = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, failed.signal]) : failed.signal;
  try {
    await pMap(
      Array.from({ length: segments }, (_, i) => i),
      async (i) => {
        let pageState: string | undefined;
        do {
          signal.throwIfAborted();
          const rs: cassandra.types.ResultSet = await client.execute(
            i === 0 ? firstQuery : query,
            [bounds[i], bounds[i + 1]],
            { prepare: true, fetchSize: pageSize, pageState },
          );
          signal.throwIfAborted();
          options.onRows(rs.rows);
          pageState = rs.pageState ?? undefined;
        } while (pageState);
      },
      { concurrency, signal: options.signal },
    );
  } catch (err) {
    failed.abort(err);
    throw err;
  }
}

/** Evenly spaced bounds over [-2^63, 2^63 - 1], `segments + 1` of them. @internal */
export function tokenBounds(segments: number): cassandra.types.Long[] {
  const min = -(2n ** 63n);
  const max = 2n ** 63n - 1n;
  const span = max - min;
  const bounds: cassandra.types.Long[] = [];
  for (let i = 0; i <= segments; i++) {
    const b = i === segments ? max : min + (span * BigInt(i)) / BigInt(segments);
    bounds.push(Long.fromString(b.toString()));
  }
  return bounds;
}
