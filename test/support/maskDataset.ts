import { deflateSync } from 'node:zlib';
import sharp from 'sharp';

/**
 * Synthetic segmentation pairs: an image of flat shapes whose red channel is either low (40)
 * or high (220), and its mask, a function of the image: 1 (grey PNG: 255) where red > 127.
 * After any geometric transform the same function of the transformed image gives the
 * transformed mask, except where interpolation blends the two sides of an edge.
 */

/** RGB pixels: a background and a few rectangles and discs, red low or high. @internal */
export function shapesImage(width: number, height: number, seed: number): Buffer {
  const px = Buffer.alloc(width * height * 3);
  let s = (seed * 2654435761) >>> 0;
  const rand = (n: number): number => {
    s = (s * 1103515245 + 12345) >>> 0;
    return (s >>> 8) % n;
  };
  const shapes = Array.from({ length: 6 }, () => ({
    disc: rand(2) === 0,
    x: rand(width),
    y: rand(height),
    r: 8 + rand(Math.max(1, Math.floor(Math.min(width, height) / 3))),
    high: rand(2) === 0,
  }));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let high = x < width / 3; // a band on the left: a flip moves it
      for (const sh of shapes) {
        const dx = x - sh.x;
        const dy = y - sh.y;
        const inside = sh.disc
          ? dx * dx + dy * dy < sh.r * sh.r
          : Math.abs(dx) < sh.r && Math.abs(dy) < sh.r / 2;
        if (inside) high = sh.high;
      }
      const at = (y * width + x) * 3;
      px[at] = high ? 220 : 40;
      px[at + 1] = (x * 2 + y) & 0xff; // green and blue vary: only red decides the mask
      px[at + 2] = (y * 3) & 0xff;
    }
  }
  return px;
}

/** The mask of RGB pixels: `hi` where red > 127, else 0. @internal */
export function maskOf(rgb: Uint8Array, channels: number, hi: number): Buffer {
  const n = rgb.length / channels;
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = rgb[i * channels]! > 127 ? hi : 0;
  return out;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf: Buffer): number {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * An 8-bit palette PNG of `indices` (one byte per pixel), its palette giving index i the
 * colour `palette[i]`. Rows use PNG's five filters in turn, so a decoder's unfiltering is
 * exercised. @internal
 */
export function palettePng(
  indices: Uint8Array,
  width: number,
  height: number,
  palette: readonly (readonly [number, number, number])[],
): Buffer {
  const stride = width + 1;
  const raw = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = y % 5;
    raw[y * stride] = filter;
    for (let x = 0; x < width; x++) {
      const v = indices[y * width + x]!;
      const a = x > 0 ? indices[y * width + x - 1]! : 0;
      const b = y > 0 ? indices[(y - 1) * width + x]! : 0;
      const c = x > 0 && y > 0 ? indices[(y - 1) * width + x - 1]! : 0;
      let pred = 0;
      if (filter === 1) pred = a;
      else if (filter === 2) pred = b;
      else if (filter === 3) pred = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      raw[y * stride + 1 + x] = (v - pred) & 0xff;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 3; // palette
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('PLTE', Buffer.from(palette.flat())),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The kinds of pair {@link segmentationPair} makes. */
export type PairKind =
  'jpeg+grey' | 'jpeg-exif6+grey' | 'webp+palette' | 'png+palette' | 'jpeg+rgb';

/**
 * One image and its mask: a JPEG (decoded natively), a JPEG with EXIF orientation 6 (the mask
 * is aligned with its stored pixels), a WebP (sharp) or a PNG; the mask an 8-bit grey PNG
 * (255 where red > 127), a palette PNG (index 1 there, whose colour is not 1) or an RGB PNG
 * (200 there, in every channel). @internal
 */
export async function segmentationPair(
  kind: PairKind,
  width: number,
  height: number,
  seed: number,
): Promise<{ image: Buffer; mask: Buffer; hi: number }> {
  const px = shapesImage(width, height, seed);
  const raw = sharp(px, { raw: { width, height, channels: 3 } });
  const image =
    kind === 'jpeg+grey'
      ? await raw.jpeg({ quality: 95 }).toBuffer()
      : kind === 'jpeg-exif6+grey'
        ? await raw.jpeg({ quality: 95 }).withMetadata({ orientation: 6 }).toBuffer()
        : kind === 'webp+palette'
          ? await raw.webp({ lossless: true }).toBuffer()
          : await raw.png().toBuffer();
  if (kind.endsWith('+grey')) {
    const mask = await sharp(maskOf(px, 3, 255), { raw: { width, height, channels: 1 } })
      .toColourspace('b-w')
      .png()
      .toBuffer();
    return { image, mask, hi: 255 };
  }
  if (kind.endsWith('+rgb')) {
    // A colour mask (8-bit RGB PNG): sharp decodes it, its first channel kept.
    const mask = await sharp(maskOf(px, 3, 200), { raw: { width, height, channels: 1 } })
      .png()
      .toBuffer();
    return { image, mask, hi: 200 };
  }
  const mask = palettePng(maskOf(px, 3, 1), width, height, [
    [0, 0, 0],
    [128, 64, 200],
  ]);
  return { image, mask, hi: 1 };
}

/**
 * Share of the pixels of a transformed `mask` (one byte each) that differ from the mask
 * function of the transformed `image` (`channels` each), leaving out pixels within one pixel
 * of an edge of either (where interpolation blends the two sides). @internal
 */
export function mismatchShare(
  image: Uint8Array,
  mask: Uint8Array,
  width: number,
  height: number,
  channels: number,
  hi: number,
): number {
  const expected = maskOf(image, channels, hi);
  const nearEdge = (m: Uint8Array, x: number, y: number): boolean => {
    const v = m[y * width + x];
    for (let dy = -1; dy <= 1; dy++) {
      for (let dx = -1; dx <= 1; dx++) {
        const nx = x + dx;
        const ny = y + dy;
        if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
        if (m[ny * width + nx] !== v) return true;
      }
    }
    return false;
  };
  let counted = 0;
  let wrong = 0;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      if (nearEdge(expected, x, y) || nearEdge(mask, x, y)) continue;
      counted++;
      if (mask[y * width + x] !== expected[y * width + x]) wrong++;
    }
  }
  return counted === 0 ? 0 : wrong / counted;
}
