// Test images made with sharp (from /work/main/node_modules): photo-like synthetic content
// (gradients + texture + noise) so that resampling differences show.
// Run as a script to write them into a directory: node fixtures.mjs <dir>
import { createRequire } from 'node:module';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const require = createRequire(new URL('../../package.json', import.meta.url));
export const sharp = require('sharp');

/** Deterministic pseudo-random generator (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Raw RGB pixels of a photo-like image: smooth colour fields, edges, fine texture and noise. */
export function photoPixels(width, height, seed = 1) {
  const r = rng(seed);
  const px = Buffer.alloc(width * height * 3);
  const blobs = Array.from({ length: 6 }, () => ({
    x: r() * width,
    y: r() * height,
    s: 20 + (r() * width) / 2,
    c: [r() * 255, r() * 255, r() * 255],
  }));
  const f = 0.05 + r() * 0.2;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 3; k++) {
        let v = (x / width) * 120 * (k === 0) + (y / height) * 120 * (k === 2) + 40;
        for (const b of blobs) {
          const d = ((x - b.x) ** 2 + (y - b.y) ** 2) / (b.s * b.s);
          v += (d < 1 ? 1 - d : 0) * (b.c[k] - 80);
        }
        v += 25 * Math.sin(x * f + k) * Math.cos(y * f * 0.7);
        v += (r() - 0.5) * 30;
        px[(y * width + x) * 3 + k] = Math.max(0, Math.min(255, Math.round(v)));
      }
    }
  }
  return px;
}

export function photo(width, height, seed = 1) {
  return sharp(photoPixels(width, height, seed), { raw: { width, height, channels: 3 } });
}

export async function makeFixtures() {
  return {
    'photo.jpg': await photo(500, 375).jpeg({ quality: 90 }).toBuffer(),
    'progressive.jpg': await photo(500, 375, 2).jpeg({ quality: 90, progressive: true }).toBuffer(),
    'grey.jpg': await photo(500, 375, 3).toColourspace('b-w').jpeg({ quality: 90 }).toBuffer(),
    'cmyk.jpg': await photo(500, 375, 4).toColourspace('cmyk').jpeg({ quality: 90 }).toBuffer(),
    // Stored 375x500, shown 500x375 (rotate 90 clockwise).
    'exif6.jpg': await photo(375, 500, 5)
      .jpeg({ quality: 90 })
      .withMetadata({ orientation: 6 })
      .toBuffer(),
    'grey28.png': await photo(28, 28, 16).toColourspace('b-w').png().toBuffer(),
    'rgba.png': await photo(120, 90, 7).ensureAlpha(0.5).png().toBuffer(),
    'rgb.png': await photo(200, 150, 8).png().toBuffer(),
    'photo.webp': await photo(64, 48, 9).webp().toBuffer(),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = process.argv[2];
  mkdirSync(dir, { recursive: true });
  for (const [name, data] of Object.entries(await makeFixtures()))
    writeFileSync(join(dir, name), data);
}
