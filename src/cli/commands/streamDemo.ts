import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { LoaderClient } from '../../client/LoaderClient.js';
import type { DbConfig } from '../../core/index.js';
import { serverConfigSchema } from '../../server/config/serverConfig.js';
import { createLoaderServer } from '../../server/createLoaderServer.js';

/** One epoch's figures as the demo's client saw them. */
export interface EpochFigures {
  epoch: number;
  samples: number;
  bytes: number;
  seconds: number;
  /** True when every sample of the split arrived exactly once. */
  exactlyOnce: boolean;
}

/**
 * Serves the dataset from an in-process loader on a free port and streams `epochs` epochs of
 * `split` through the client SDK, checking that each epoch delivered `sampleCount` distinct
 * samples, each exactly once. The loader logs only warnings here.
 */
export async function streamDemo(options: {
  db: DbConfig;
  dataset: string;
  split: string;
  sampleCount: number;
  epochs: number;
  batchSize: number;
  onEpoch: (figures: EpochFigures) => void;
}): Promise<EpochFigures[]> {
  const server = await createLoaderServer(
    serverConfigSchema.parse({
      db: options.db,
      host: '127.0.0.1',
      port: 0,
      metricsPort: 0,
      resumeKey: randomBytes(32).toString('hex'),
    }),
    { logger: pino({ level: 'warn' }) },
  );
  const client = new LoaderClient(`127.0.0.1:${server.port}`);
  const results: EpochFigures[] = [];
  try {
    let seen = new Set<string>();
    let count = 0;
    let bytes = 0;
    let started = performance.now();
    for await (const batch of client.streamBatches({
      dataset: options.dataset,
      split: options.split,
      batchSize: options.batchSize,
      seed: 42,
      epochs: options.epochs,
    })) {
      for (const id of batch.ids) seen.add(id);
      count += batch.ids.length;
      bytes += batch.data.length;
      if (batch.lastInEpoch) {
        const figures = {
          epoch: batch.epoch,
          samples: count,
          bytes,
          seconds: (performance.now() - started) / 1000,
          exactlyOnce: count === options.sampleCount && seen.size === options.sampleCount,
        };
        results.push(figures);
        options.onEpoch(figures);
        seen = new Set();
        count = 0;
        bytes = 0;
        started = performance.now();
      }
    }
  } finally {
    client.close();
    await server.shutdown('demo finished');
  }
  return results;
}
