import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { DbConfig } from '../../src/core/index.js';
import {
  type PhotoPresetName,
  readPhotoFolder,
  writePhotoJpegs,
} from '../../src/datasets/photos/index.js';
import {
  type BenchDataset,
  type BenchProgressFactory,
  ensureBenchDataset,
  withDbClient,
} from '../../test/support/index.js';

/** The segmentation dataset of the masks leg: `bench stream`'s photos, each with a mask. */
export function segmentationDatasetName(dataset: string): string {
  return `${dataset}_seg`;
}

/**
 * A mask like a segmentation dataset's: class ids 0-4 (an 8-bit grey PNG) in a few large
 * regions with smooth edges, of the photo's size. Deterministic by `seed`.
 */
function maskPixels(width: number, height: number, seed: number): Buffer {
  const px = Buffer.alloc(width * height);
  let s = (seed * 2654435761) >>> 0 || 1;
  const rand = (n: number): number => {
    s = (s * 1103515245 + 12345) >>> 0;
    return (s >>> 8) % n;
  };
  const blobs = Array.from({ length: 5 }, (_, i) => ({
    x: rand(width),
    y: rand(height),
    r: 20 + rand(Math.max(1, Math.floor(Math.min(width, height) / 2))),
    c: 1 + (i % 4),
  }));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let c = 0;
      for (const b of blobs) {
        if ((x - b.x) ** 2 + (y - b.y) ** 2 < b.r * b.r) c = b.c;
      }
      px[y * width + x] = c;
    }
  }
  return px;
}

/**
 * Makes sure `<dataset>_seg` holds photos 0..samples-1 of the benchmarks' photo tree (which
 * `preparePhotoBench` writes; the missing ones are written here, as a tree whose photo dataset
 * was already ingested may not be on this machine), each with a grey PNG mask of its size as
 * its label blob; the masks are written next to the tree (`<imageRoot>-masks/`) once.
 */
export async function prepareSegmentationBench(options: {
  db: DbConfig;
  dataset: string;
  samples: number;
  imageRoot: string;
  payload?: PhotoPresetName;
  progress?: BenchProgressFactory | undefined;
  signal?: AbortSignal | undefined;
}): Promise<BenchDataset> {
  return withDbClient(options.db, (client) =>
    ensureBenchDataset(client, {
      name: segmentationDatasetName(options.dataset),
      samples: options.samples,
      ...(options.progress ? { progress: options.progress } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      source: async () => {
        await writePhotoJpegs({
          root: options.imageRoot,
          count: options.samples,
          preset: options.payload ?? 'imagenet',
          ...(options.signal ? { signal: options.signal } : {}),
        });
        const source = await readPhotoFolder(options.imageRoot, options.samples);
        const dir = `${options.imageRoot.replace(/\/+$/, '')}-masks`;
        await mkdir(dir, { recursive: true });
        for (const [i, entry] of source.entries.entries()) {
          const file = path.join(dir, `${i}.png`);
          const { width, height } = await sharp(entry.filePath!).metadata();
          // A mask left by an earlier photo tree (the photos' sources changed since) has
          // another size than its image now: it is written anew, never ingested stale.
          const fits = await sharp(file)
            .metadata()
            .then(
              (m) => m.width === width && m.height === height,
              () => false,
            );
          if (!fits) {
            const png = await sharp(maskPixels(width, height, i + 1), {
              raw: { width, height, channels: 1 },
            })
              .toColourspace('b-w')
              .png()
              .toBuffer();
            await writeFile(file, png);
          }
          entry.labelBlobPath = file;
        }
        return source;
      },
    }),
  );
}
