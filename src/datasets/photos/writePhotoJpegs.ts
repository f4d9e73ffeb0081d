import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { fetchPhotoPackages } from './fetchPhotoPackages.js';
import { listSourcePhotos, type SourcePhoto } from './listSourcePhotos.js';
import { PHOTO_PRESETS, photoOutputSize, type PhotoPresetName } from './PhotoPreset.js';
import { photoImagePath } from './photoImagePath.js';
import { cropWindow, photoVariant } from './photoVariant.js';

/** Options of {@link writePhotoJpegs}. */
export interface WritePhotoJpegsOptions {
  /** Root of the ImageFolder tree to write. */
  root: string;
  /** Images 0..count-1 are made. */
  count: number;
  preset: PhotoPresetName;
  /** Source photos; default: the photo packages fetched into the cache and listed. */
  sources?: SourcePhoto[];
  /** Cache folder of the packages (see {@link fetchPhotoPackages}). */
  cacheDir?: string;
  /** Encodes in flight; default: the number of cores. */
  concurrency?: number;
  /** Called after each image, written or already there, with the bytes of all so far. */
  onProgress?: (done: number, bytes: number) => void;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** What {@link writePhotoJpegs} found and made. */
export interface WrittenPhotos {
  images: number;
  /** Images this call wrote (the rest were there). */
  written: number;
  totalBytes: number;
  meanBytes: number;
  sourcePhotos: number;
}

/**
 * Longest side a source photo is scaled down to, once, before cropping: the largest crops
 * still have more pixels than any output, and decoding a 1280 px JPEG per image instead of a
 * 2560 px one keeps the generator about four times faster.
 */
const SOURCE_LONG_SIDE = 1280;

/**
 * Makes sure images 0..count-1 of `preset` exist under `root` as an ImageFolder tree (one
 * class per source photo), writing only the missing ones. Image `i` is source photo
 * `i mod S` cropped, flipped and tinted as {@link photoVariant} of `i` says, resized and
 * JPEG-encoded with sharp: the same index gives the same bytes on a re-run, and no two
 * indexes give the same crop. Each file is written under a hidden name and renamed, so a
 * reader never sees half a file; sharp encodes `concurrency` images at once on its threads.
 */
export async function writePhotoJpegs(options: WritePhotoJpegsOptions): Promise<WrittenPhotos> {
  const preset = PHOTO_PRESETS[options.preset];
  const sources =
    options.sources ??
    (await listSourcePhotos(
      await fetchPhotoPackages({
        ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
        ...(options.log ? { log: options.log } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      }),
    ));
  if (sources.length === 0) throw new Error('no source photos found in the photo packages');
  const scaled = new Map<number, Promise<{ data: Buffer; width: number; height: number }>>();
  const scaledSource = (s: number): Promise<{ data: Buffer; width: number; height: number }> => {
    let p = scaled.get(s);
    if (!p) {
      p = sharp(sources[s]!.file)
        .rotate()
        .resize(SOURCE_LONG_SIDE, SOURCE_LONG_SIDE, { fit: 'inside', withoutEnlargement: true })
        .jpeg({ quality: 95 })
        .toBuffer({ resolveWithObject: true })
        .then(({ data, info }) => ({ data, width: info.width, height: info.height }));
      scaled.set(s, p);
    }
    return p;
  };

  const encode = async (index: number): Promise<Buffer> => {
    const v = photoVariant(index, sources.length);
    const src = await scaledSource(v.source);
    const aspect = preset.fixedAspect ?? v.aspect;
    const out = photoOutputSize(preset, aspect, v.size);
    let image = sharp(src.data)
      .extract(cropWindow(v, src.width, src.height, aspect))
      .resize(out.width, out.height, { fit: 'fill' });
    if (v.flip) image = image.flop();
    return image
      .modulate({ brightness: v.brightness, saturation: v.saturation })
      .jpeg({ quality: preset.quality })
      .toBuffer();
  };

  const concurrency = options.concurrency ?? os.availableParallelism();
  const pending = new Set<Promise<void>>();
  const folders = new Set<string>();
  let done = 0;
  let bytes = 0;
  let written = 0;
  for (let i = 0; i < options.count; i++) {
    options.signal?.throwIfAborted();
    const file = photoImagePath(options.root, i, i % sources.length);
    const existing = await stat(file).catch(() => null);
    if (existing) {
      done++;
      bytes += existing.size;
      options.onProgress?.(done, bytes);
      continue;
    }
    const job = (async () => {
      const jpeg = await encode(i);
      const dir = path.dirname(file);
      if (!folders.has(dir)) {
        await mkdir(dir, { recursive: true });
        folders.add(dir);
      }
      const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.tmp`);
      await writeFile(tmp, jpeg);
      await rename(tmp, file);
      done++;
      written++;
      bytes += jpeg.length;
      options.onProgress?.(done, bytes);
    })();
    pending.add(job);
    void job.finally(() => pending.delete(job)).catch(() => undefined);
    if (pending.size >= concurrency) await Promise.race(pending);
  }
  await Promise.all(pending);
  return {
    images: options.count,
    written,
    totalBytes: bytes,
    meanBytes: options.count > 0 ? bytes / options.count : 0,
    sourcePhotos: sources.length,
  };
}
