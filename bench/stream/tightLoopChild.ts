/**
 * Child process of `bench stream`: the baseline. Reads every sample of a dataset once with the
 * same driver, pooling and statement as the loader, `concurrency` samples in flight, no gRPC,
 * and reports what it read, how long it took and its own CPU seconds. With `groupReads` above
 * 1 it reads as a grouping loader does: the read order cut into slices, each slice's ids
 * grouped by replica set (at most `groupReads` per query), one `WHERE id IN ?` query per
 * group routed by its first id, `concurrency / groupReads` queries in flight. @internal
 */
import cassandra from 'cassandra-driver';
import pMap from 'p-map';
import {
  createDbClient,
  type DbConfig,
  groupByReplica,
  loadSplitIds,
  permutation,
  ReplicaSets,
  SourceCatalog,
} from '../../src/core/index.js';
import { runBenchChild } from './childProtocol.js';
import { startSelfMeasure } from '../measure/startSelfMeasure.js';

/** Settings of a tight-loop child. @internal */
export interface TightLoopConfig {
  db: DbConfig;
  dataset: string;
  concurrency: number;
  /** Seed of the read order (the permutation the loader would use for epoch 0). */
  seed: number;
  /**
   * Reads done before `ready`, untimed (the benchmark asks for a whole pass), so the measured
   * pass finds the process warmed up (JIT, heap sizes, connections), as the loader is.
   */
  warmupReads: number;
  /** Samples per query at most (absent or 1: one single-row read per sample). */
  groupReads?: number;
}

/** What a tight-loop child measured. @internal */
export interface TightLoopResult {
  samples: number;
  bytes: number;
  wallSeconds: number;
  cpuSeconds: number;
}

runBenchChild<TightLoopConfig, TightLoopResult>(async (config, ready) => {
  const client = await createDbClient(config.db);
  try {
    const split = await loadSplitIds(client, config.dataset);
    const order = permutation(split.count, BigInt(config.seed), 0);
    const query = `SELECT label, label_blob, data FROM ${config.dataset}.samples WHERE id = ?`;
    const options: cassandra.QueryOptions = {
      prepare: true,
      isIdempotent: true,
      consistency: cassandra.types.consistencies.localOne,
    };
    const group = config.groupReads ?? 1;
    const groupQuery = `SELECT id, label, label_blob, data FROM ${config.dataset}.samples WHERE id IN ?`;
    const sets = new ReplicaSets(
      client.metadata,
      new SourceCatalog([{ keyspace: config.dataset, ids: split.ids }]),
    );
    const idOf = (stored: number): Buffer => split.ids.subarray(stored * 16, stored * 16 + 16);
    const readGrouped = async (count: number): Promise<{ samples: number; bytes: number }> => {
      // Slices of the read order as a loader's pump would pick them (a window's worth), each
      // grouped by replica set.
      const order2 = [...order.subarray(0, count)];
      const slice = Math.max(group, 4 * group);
      const groups: number[][] = [];
      for (let i = 0; i < order2.length; i += slice) {
        groups.push(...groupByReplica(order2.slice(i, i + slice), (s) => sets.of(s), group));
      }
      let samples = 0;
      let bytes = 0;
      await pMap(
        groups,
        async (members) => {
          const ids = members.map((s) => idOf(s));
          const rs = await client.execute(
            groupQuery,
            [ids.map((id) => new cassandra.types.Uuid(id))],
            { ...options, routingKey: ids[0] },
          );
          if (rs.rows.length !== ids.length) {
            throw new Error(`a group of ${ids.length} ids got ${rs.rows.length} rows`);
          }
          for (const row of rs.rows) {
            const data = row['data'] as Buffer;
            const blob = row['label_blob'] as Buffer | null;
            samples++;
            bytes += data.length + (blob?.length ?? 0);
          }
        },
        { concurrency: Math.max(1, Math.round(config.concurrency / group)) },
      );
      return { samples, bytes };
    };
    const readAll = async (count: number): Promise<{ samples: number; bytes: number }> => {
      if (group > 1) return readGrouped(count);
      let samples = 0;
      let bytes = 0;
      await pMap(
        order.subarray(0, count),
        async (stored) => {
          const id = new cassandra.types.Uuid(split.ids.subarray(stored * 16, stored * 16 + 16));
          const row = (await client.execute(query, [id], options)).first();
          if (!row) throw new Error(`sample ${id.toString()} has no row`);
          const data = row['data'] as Buffer;
          const blob = row['label_blob'] as Buffer | null;
          samples++;
          bytes += data.length + (blob?.length ?? 0);
        },
        { concurrency: config.concurrency },
      );
      return { samples, bytes };
    };
    await readAll(Math.min(config.warmupReads, split.count));
    await ready();
    const measure = startSelfMeasure();
    const read = await readAll(split.count);
    return { ...read, ...measure() };
  } finally {
    await client.shutdown();
  }
});
