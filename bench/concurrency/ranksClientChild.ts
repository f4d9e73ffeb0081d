/**
 * Child process of `bench concurrency`: the ranks of one training job, each streaming the same
 * epochs and seed as rank r of k through its own {@link LoaderClient}, all started at once. It
 * reports each rank's figures, and writes the sample ids each rank received to a file (a
 * result line of several hundred kB could arrive after the child's exit, which
 * `startBenchChild` would take for an exit without a result), so the parent can check that
 * the ranks together got every sample of the dataset exactly once per epoch.
 *
 * Why one process hosting k ranks rather than k processes: a real job's ranks run on other
 * machines, so what matters is what the loader sees, k calls on k HTTP/2 connections, and
 * that each client gets its own connection (`grpc.use_local_subchannel_pool`: grpc-js would
 * otherwise share one connection between channels to the same address). On this 2-core
 * machine k node processes (up to 16) would each cost a runtime, a heap and start-up time and
 * compete with the loader and the database for the same cores, so the figures would show the
 * scheduler rather than the loader. The price: the ranks' decoding shares one event loop, so
 * the report gives the client's CPU seconds to show when the client side is the limit. @internal
 */
import { writeFile } from 'node:fs/promises';
import { LoaderClient, type StreamBatchesOptions } from '../../src/client/index.js';
import { runBenchChild } from '../stream/childProtocol.js';
import { quantile } from '../stream/stats.js';
import { startSelfMeasure } from '../measure/startSelfMeasure.js';

/** Settings of a ranks client child. @internal */
export interface RanksClientConfig {
  address: string;
  dataset: string;
  batchSize: number;
  seed: number;
  epochs: number;
  /** Ranks (streams), the job's world size. */
  streams: number;
  /** Where to write the ids received, as JSON {@link RanksIds}. */
  idsFile: string;
}

/** The sample ids each rank received (by rank), one list per epoch from the first. @internal */
export type RanksIds = string[][][];

/** What one rank received. @internal */
export interface RankResult {
  rank: number;
  samples: number;
  bytes: number;
  batches: number;
  /** From the common start to this rank's last batch. */
  wallSeconds: number;
  firstBatchMs: number;
}

/** What a ranks client child measured. @internal */
export interface RanksClientResult {
  /** From the common start to the last rank's last batch. */
  wallSeconds: number;
  /** The process's CPU seconds over that time (all ranks). */
  cpuSeconds: number;
  ranks: RankResult[];
  /** Time between batches as each rank's consumer saw them, pooled over all ranks, ms. */
  waitMs: { p50: number; p99: number; max: number };
}

runBenchChild<RanksClientConfig, RanksClientResult>(async (config, ready) => {
  const clients = Array.from(
    { length: config.streams },
    () =>
      new LoaderClient(config.address, {
        channelOptions: { 'grpc.use_local_subchannel_pool': 1 },
      }),
  );
  try {
    const request = (rank: number, seed: number, worldSize: number): StreamBatchesOptions => ({
      dataset: config.dataset,
      split: 'all',
      batchSize: config.batchSize,
      seed,
      epochs: config.epochs,
      rank,
      worldSize,
    });
    // Untimed: every client connects and the process warms up (JIT, heap sizes) on one epoch
    // of another seed, split among the ranks (at least 10 shares, so k=1 warms up briefly).
    const warmupWorld = Math.max(config.streams, 10);
    await Promise.all(
      clients.map(async (client, rank) => {
        for await (const batch of client.streamBatches({
          ...request(rank, config.seed + 1_000_000, warmupWorld),
          epochs: 1,
        })) {
          void batch;
        }
      }),
    );
    await ready();
    const waits: number[] = [];
    const measure = startSelfMeasure();
    const t0 = performance.now();
    const received = await Promise.all(
      clients.map(async (client, rank): Promise<{ figures: RankResult; ids: string[][] }> => {
        const idsByEpoch: string[][] = [];
        let samples = 0;
        let bytes = 0;
        let batches = 0;
        let first = Number.NaN;
        let last = t0;
        for await (const batch of client.streamBatches(
          request(rank, config.seed, config.streams),
        )) {
          const now = performance.now();
          waits.push(now - last);
          if (batches === 0) first = now - t0;
          last = now;
          batches++;
          for (const sample of batch.samples) bytes += sample.length;
          samples += batch.samples.length;
          const ids = (idsByEpoch[batch.epoch] ??= []);
          for (const id of batch.ids) ids.push(id);
        }
        return {
          figures: {
            rank,
            samples,
            bytes,
            batches,
            wallSeconds: (last - t0) / 1000,
            firstBatchMs: first,
          },
          ids: Array.from({ length: config.epochs }, (_, e) => idsByEpoch[e] ?? []),
        };
      }),
    );
    const { wallSeconds, cpuSeconds } = measure();
    const ids: RanksIds = received.map((r) => r.ids);
    await writeFile(config.idsFile, JSON.stringify(ids));
    return {
      wallSeconds,
      cpuSeconds,
      ranks: received.map((r) => r.figures),
      waitMs: {
        p50: quantile(waits, 0.5),
        p99: quantile(waits, 0.99),
        max: Math.max(...waits),
      },
    };
  } finally {
    for (const client of clients) client.close();
  }
});
