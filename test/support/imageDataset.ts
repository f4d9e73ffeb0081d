import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import sharp from 'sharp';
import { ingestDataset, readManifest } from '../../src/core/index.js';

/** One file of an image dataset and what the test expects of it. */
export interface ImageFixture {
  key: string;
  label: number;
  data: Buffer;
  /** `good` decodes; the others are bad on purpose, with the failure reason expected. */
  kind: 'good' | 'corrupt' | 'truncated' | 'pixel_limit';
}

/**
 * Pixels with structure at every scale (gradients plus a seeded pattern), so that two
 * different crops or a mirror of one give different bytes. @internal
 */
export function patternPixels(width: number, height: number, seed: number, channels = 3): Buffer {
  const px = Buffer.alloc(width * height * channels);
  let s = seed * 2654435761;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      s = (s * 1103515245 + 12345) >>> 0;
      for (let c = 0; c < channels; c++) {
        const v = (x * (3 + c) + y * (5 - c) + ((s >>> (8 * c)) & 0x3f) + seed * 17) & 0xff;
        px[(y * width + x) * channels + c] = v;
      }
    }
  }
  return px;
}

/**
 * Makes `good` photos of varied sizes and formats (RGB JPEGs, one with EXIF orientation 6, a
 * CMYK JPEG, a grey PNG, an RGBA PNG, a WebP) and, with `bad`, a corrupt JPEG, a truncated PNG and a
 * PNG of 2,500 x 2,500 pixels (over a 4-megapixel limit), and ingests their bytes as they are
 * through the real ingest (a manifest stores any bytes). Returns them by source key.
 */
export async function ingestImageDataset(
  client: cassandra.Client,
  dataset: string,
  good: number,
  bad: boolean,
): Promise<Map<string, ImageFixture>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-images-'));
  await mkdir(path.join(dir, 'files'));
  const files: ImageFixture[] = [];
  for (let i = 0; i < good; i++) {
    const width = 96 + ((i * 37) % 160);
    const height = 80 + ((i * 53) % 140);
    const raw = sharp(patternPixels(width, height, i + 1), { raw: { width, height, channels: 3 } });
    let data: Buffer;
    let ext = 'jpg';
    if (i % 10 === 3) {
      data = await raw.jpeg({ quality: 92 }).withMetadata({ orientation: 6 }).toBuffer();
    } else if (i % 10 === 5) {
      data = await raw.toColourspace('cmyk').jpeg({ quality: 92 }).toBuffer();
    } else if (i % 10 === 7) {
      data = await raw.toColourspace('b-w').png().toBuffer();
      ext = 'png';
    } else if (i % 10 === 9) {
      data = await raw.ensureAlpha(0.5).png().toBuffer();
      ext = 'png';
    } else if (i % 10 === 1) {
      // A format only sharp decodes, among JPEGs: the native path must hand it over.
      data = await raw.webp({ quality: 90 }).toBuffer();
      ext = 'webp';
    } else {
      data = await raw.jpeg({ quality: 90 }).toBuffer();
    }
    files.push({ key: `files/${i}.${ext}`, label: i % 5, data, kind: 'good' });
  }
  if (bad) {
    const jpeg = await sharp(patternPixels(120, 90, 99), {
      raw: { width: 120, height: 90, channels: 3 },
    })
      .jpeg()
      .toBuffer();
    const corrupt = Buffer.from(jpeg);
    corrupt.fill(0x55, 200, corrupt.length - 2); // markers intact, entropy data garbage
    const png = await sharp(patternPixels(120, 90, 98), {
      raw: { width: 120, height: 90, channels: 3 },
    })
      .png()
      .toBuffer();
    const bomb = await sharp({
      create: { width: 2500, height: 2500, channels: 3, background: '#808080' },
    })
      .png()
      .toBuffer();
    files.push(
      { key: 'files/corrupt.jpg', label: 0, data: corrupt, kind: 'corrupt' },
      {
        key: 'files/truncated.png',
        label: 1,
        data: png.subarray(0, png.length >> 1),
        kind: 'truncated',
      },
      { key: 'files/bomb.png', label: 2, data: bomb, kind: 'pixel_limit' },
    );
  }
  const lines = ['path,label'];
  for (const f of files) {
    await writeFile(path.join(dir, f.key), f.data);
    lines.push(`${f.key},${f.label}`);
  }
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(client, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv')),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 32,
    strict: false,
  });
  return new Map(files.map((f) => [f.key, f]));
}
