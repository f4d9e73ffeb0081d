import { stringify } from 'uuid';
import { createDbClient, type DbConfig, loadSplitIds } from '../../src/core/index.js';
import { benchEnvironment, type BenchEnvironment } from '../stream/benchEnvironment.js';
import { prepareStreamDataset, type StreamDataset } from '../stream/prepareStreamDataset.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/** What a benchmark of several ranks needs before its runs. */
export interface RanksDataset {
  environment: BenchEnvironment;
  dataset: StreamDataset;
  /** The ids of split `all`, as UUID strings: what the ranks together must receive. */
  datasetIds: string[];
}

/**
 * Prepares the `bench stream` dataset (ingesting it when missing) and reads the machine's
 * environment and the ids every epoch must deliver exactly once, over one database session.
 * `bench concurrency` and `bench cores` start from it.
 */
export async function prepareRanksDataset(options: {
  db: DbConfig;
  dataset: string;
  samples: number;
  imageRoot: string;
  progress: BenchProgressFactory;
  signal?: AbortSignal | undefined;
}): Promise<RanksDataset> {
  const client = await createDbClient(options.db);
  try {
    const environment = await benchEnvironment(client);
    const dataset = await prepareStreamDataset(client, {
      name: options.dataset,
      samples: options.samples,
      imageRoot: options.imageRoot,
      progress: options.progress,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    const all = await loadSplitIds(client, options.dataset);
    const datasetIds = Array.from({ length: all.count }, (_, i) => stringify(all.ids, i * 16));
    return { environment, dataset, datasetIds };
  } finally {
    await client.shutdown();
  }
}
