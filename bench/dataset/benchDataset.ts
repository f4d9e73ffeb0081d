import { stringify } from 'uuid';
import { type DbConfig, loadSplitIds } from '../../src/core/index.js';
import {
  type PhotoPresetName,
  readPhotoFolder,
  writePhotoJpegs,
} from '../../src/datasets/photos/index.js';
import {
  type BenchDataset,
  benchEnvironment,
  type BenchEnvironment,
  type BenchProgressFactory,
  ensureBenchDataset,
  withDbClient,
} from '../../test/support/index.js';

/** A photo benchmark's starting point: the machine, its dataset and (if asked) its ids. */
export interface PhotoBench {
  environment: BenchEnvironment;
  dataset: BenchDataset;
  /** The ids of split `all` as UUID strings (what ranks together must receive); [] unless asked. */
  datasetIds: string[];
}

/**
 * Over one database session: describes the machine, and makes sure dataset `dataset` holds
 * images 0..samples-1 of the benchmarks' ImageFolder tree of photo crops (preset `payload`,
 * default `imagenet`; the images missing are written first), through the real ingest. With
 * `ids`, also reads the ids every epoch must deliver exactly once. @internal
 */
export async function preparePhotoBench(options: {
  db: DbConfig;
  dataset: string;
  samples: number;
  imageRoot: string;
  payload?: PhotoPresetName;
  ids?: boolean;
  progress?: BenchProgressFactory | undefined;
  log?: ((line: string) => void) | undefined;
  signal?: AbortSignal | undefined;
}): Promise<PhotoBench> {
  return withDbClient(options.db, async (client) => {
    const environment = await benchEnvironment(client);
    const dataset = await ensureBenchDataset(client, {
      name: options.dataset,
      samples: options.samples,
      dropHint: 'remove it with `bench stream --drop` (same --samples) or pick another --dataset',
      progress: options.progress,
      signal: options.signal,
      source: async (progress) => {
        const images = progress(`images ${options.imageRoot}`, options.samples, 'images');
        try {
          await writePhotoJpegs({
            root: options.imageRoot,
            count: options.samples,
            preset: options.payload ?? 'imagenet',
            onProgress: (done, bytes) => images.update(done, bytes),
            log: (line) => images.log(line),
            ...(options.signal ? { signal: options.signal } : {}),
          });
        } finally {
          images.stop();
        }
        return readPhotoFolder(options.imageRoot, options.samples);
      },
    });
    options.log?.(
      `dataset ${dataset.name}: ${dataset.samples} samples, mean ` +
        `${(dataset.meanBytes / 1e3).toFixed(1)} kB, ${(dataset.totalBytes / 1e6).toFixed(1)} MB` +
        (dataset.ingested
          ? ` (made in ${dataset.prepareSeconds.toFixed(1)} s)`
          : ' (already there)'),
    );
    let datasetIds: string[] = [];
    if (options.ids) {
      const all = await loadSplitIds(client, options.dataset);
      datasetIds = Array.from({ length: all.count }, (_, i) => stringify(all.ids, i * 16));
    }
    return { environment, dataset, datasetIds };
  });
}
