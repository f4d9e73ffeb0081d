import type cassandra from 'cassandra-driver';
import {
  type AssembledBatch,
  BatchFetcher,
  createLoaderMetrics,
  epochShard,
  type FetchOptions,
  type LoaderMetrics,
} from '../../src/core/index.js';

/**
 * Fetch engine options for a test against the real node: one epoch of `ids` (16 bytes each)
 * of `keyspace`, shuffled with `seed`, rank 0 of 1, batches of 32, prefetch 4, in order, the
 * missing-sample policy `fail`, over the single route `client`; `extra` overrides any of it.
 */
export function engineOptions(
  base: { keyspace: string; ids: Buffer; client: cassandra.Client; seed?: bigint },
  extra: Partial<FetchOptions> = {},
  metrics: LoaderMetrics = createLoaderMetrics(),
): FetchOptions {
  const sources = extra.sources ?? [{ keyspace: base.keyspace, ids: base.ids }];
  const n = sources.reduce((a, s) => a + s.ids.length / 16, 0);
  const seed = base.seed ?? 5n;
  return {
    sources,
    firstEpoch: 0,
    endEpoch: 1,
    shardOf: (epoch) =>
      epochShard({
        n,
        seed,
        epoch,
        rank: 0,
        worldSize: 1,
        shardRule: 'uneven',
        shuffle: 'uniform',
        batchSize: 32,
        dropLast: false,
      }),
    batchSize: 32,
    prefetch: 4,
    ordering: 'in-order',
    missing: 'fail',
    maxInFlight: 64,
    readAttempts: 3,
    retryBaseMs: 10,
    paths: [{ name: 'primary', client: base.client }],
    metrics,
    signal: new AbortController().signal,
    ...extra,
  };
}

/** Every batch the engine yields for `opts`. */
export async function collectBatches(opts: FetchOptions): Promise<AssembledBatch[]> {
  const out: AssembledBatch[] = [];
  for await (const b of new BatchFetcher(opts).batches()) out.push(b);
  return out;
}

/**
 * The sum of a metric's values whose labels include `labels` (a histogram's buckets and sum
 * left out: its count is what is summed).
 */
export async function metricValue(
  metrics: LoaderMetrics,
  name: keyof LoaderMetrics,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = metrics[name] as {
    get(): Promise<{ values: { labels: object; value: number; metricName?: string }[] }>;
  };
  const { values } = await metric.get();
  return values
    .filter((v) => !v.metricName || !/_(bucket|sum)$/.test(v.metricName))
    .filter((v) =>
      Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x),
    )
    .reduce((a, v) => a + v.value, 0);
}
