/**
 * Child process of `bench stream`: the baseline. Reads every sample of a dataset once with the
 * same driver, pooling and statement as the loader, `concurrency` reads in flight, no gRPC,
 * and reports what it read, how long it took and its own CPU seconds.
 *
 * @internal
 */
import cassandra from 'cassandra-driver';
import pMap from 'p-map';
import { type DbConfig, createDbClient, permutation, loadSplitIds } from '../../src/core/index.js';
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
    const readAll = async (count: number): Promise<{ samples: number; bytes: number }> => {
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
