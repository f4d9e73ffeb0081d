import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';

/**
 * Shape of the benchmark's images: at this size, with smooth gradients plus uniform noise of
 * ±`noise` levels, sharp's JPEG at quality 90 lands near 100 kB (the sample size).
 *
 * @internal
 */
export const BENCH_IMAGE = { width: 672, height: 504, noise: 16, quality: 90, classes: 4 };

/**
 * Path of image `index` in an ImageFolder tree: `root/class_<index mod classes>/img_<index>.jpg`.
 *
 * @internal
 */
export function benchImagePath(root: string, index: number): string {
  return path.join(
    root,
    `class_${index % BENCH_IMAGE.classes}`,
    `img_${String(index).padStart(6, '0')}.jpg`,
  );
}

/**
 * The index of a file named by {@link benchImagePath}, or undefined for another name.
 *
 * @internal
 */
export function benchImageIndex(file: string): number | undefined {
  const m = /^img_(\d+)\.jpg$/.exec(path.basename(file));
  return m ? Number(m[1]) : undefined;
}

/**
 * Makes sure images 0..count-1 exist under `root`, writing only the missing ones. Each image is
 * a pure function of its index (so a re-run writes the same bytes), written under a hidden
 * name and renamed, so a reader never sees half a file. Pixels are made on this thread while
 * sharp encodes earlier images on its own threads.
 *
 * @internal
 */
export async function writeBenchJpegs(
  root: string,
  count: number,
  onProgress?: (done: number, bytes: number) => void,
  signal?: AbortSignal,
): Promise<{ written: number }> {
  for (let c = 0; c < Math.min(count, BENCH_IMAGE.classes); c++) {
    await mkdir(path.join(root, `class_${c}`), { recursive: true });
  }
  const { width, height, quality } = BENCH_IMAGE;
  const pending = new Set<Promise<void>>();
  let done = 0;
  let bytes = 0;
  let written = 0;
  for (let i = 0; i < count; i++) {
    signal?.throwIfAborted();
    const file = benchImagePath(root, i);
    const existing = await stat(file).catch(() => null);
    if (existing) {
      done++;
      bytes += existing.size;
      onProgress?.(done, bytes);
      continue;
    }
    const pixels = benchPixels(i);
    const job = sharp(pixels, { raw: { width, height, channels: 3 } })
      .jpeg({ quality })
      .toBuffer()
      .then(async (jpeg) => {
        const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
        await writeFile(tmp, jpeg);
        await rename(tmp, file);
        done++;
        written++;
        bytes += jpeg.length;
        onProgress?.(done, bytes);
      });
    pending.add(job);
    void job.finally(() => pending.delete(job)).catch(() => undefined);
    if (pending.size >= 4) await Promise.race(pending);
  }
  await Promise.all(pending);
  return { written };
}

/** Raw RGB pixels of image `index`: three sinusoidal gradients with its own phases, plus noise. */
function benchPixels(index: number): Buffer {
  const { width, height, noise } = BENCH_IMAGE;
  let s = (Math.imul(index + 1, 2654435761) ^ 0x9e3779b9) >>> 0 || 1;
  const random = (): number => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
  const fx = 1 + random() * 3;
  const fy = 1 + random() * 3;
  const phase = random() * 2 * Math.PI;
  const col = [new Float64Array(width), new Float64Array(width), new Float64Array(width)];
  const row = [new Float64Array(height), new Float64Array(height), new Float64Array(height)];
  for (let x = 0; x < width; x++) {
    col[0]![x] = 128 + 100 * Math.sin((x / width) * fx * Math.PI + phase);
    col[1]![x] = 0;
    col[2]![x] = 128 + 45 * Math.sin((x / width) * fx * 2 * Math.PI);
  }
  for (let y = 0; y < height; y++) {
    row[0]![y] = 0;
    row[1]![y] = 128 + 100 * Math.cos((y / height) * fy * Math.PI + phase);
    row[2]![y] = 45 * Math.sin((y / height) * fx * 2 * Math.PI + phase);
  }
  const pixels = Buffer.allocUnsafe(width * height * 3);
  let o = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let c = 0; c < 3; c++) {
        const v = col[c]![x]! + row[c]![y]! + (random() - 0.5) * 2 * noise;
        pixels[o++] = v < 0 ? 0 : v > 255 ? 255 : v;
      }
    }
  }
  return pixels;
}
