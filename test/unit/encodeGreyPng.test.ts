import { crc32, inflateSync } from 'node:zlib';
import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { encodeGreyPng } from '../../src/datasets/encodeGreyPng.js';

/** The chunks of a PNG file, each with its CRC checked. */
function chunks(png: Buffer): Array<{ type: string; data: Buffer }> {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  const out: Array<{ type: string; data: Buffer }> = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const body = png.subarray(at + 4, at + 8 + length);
    expect(png.readUInt32BE(at + 8 + length)).toBe(crc32(body));
    out.push({ type: body.subarray(0, 4).toString('latin1'), data: body.subarray(4) });
    at += 12 + length;
  }
  return out;
}

/** Pixels that are not all alike, so a row or byte out of place shows. */
function gradient(width: number, height: number): Buffer {
  return Buffer.from(Array.from({ length: width * height }, (_, i) => (i * 37 + (i >> 3)) & 255));
}

describe('encodeGreyPng', () => {
  it('writes IHDR, IDAT and IEND: 8-bit greyscale, unfiltered rows of the given pixels', () => {
    const pixels = gradient(28, 28);
    const parts = chunks(encodeGreyPng(pixels, 28, 28));
    expect(parts.map((c) => c.type)).toEqual(['IHDR', 'IDAT', 'IEND']);
    const ihdr = parts[0]!.data;
    expect([ihdr.readUInt32BE(0), ihdr.readUInt32BE(4), ...ihdr.subarray(8)]).toEqual([
      28, 28, 8, 0, 0, 0, 0,
    ]);
    const raw = inflateSync(parts[1]!.data);
    expect(raw).toHaveLength(29 * 28);
    const rows = Array.from({ length: 28 }, (_, y) => raw.subarray(y * 29, (y + 1) * 29));
    expect(rows.every((r) => r[0] === 0)).toBe(true);
    expect(Buffer.concat(rows.map((r) => r.subarray(1)))).toEqual(pixels);
  });

  it('decodes to the same pixels with a real decoder, for square and oblong sizes', async () => {
    for (const [width, height] of [
      [28, 28],
      [1, 1],
      [300, 7],
    ] as const) {
      const pixels = gradient(width, height);
      const { data, info } = await sharp(encodeGreyPng(pixels, width, height))
        .extractChannel(0)
        .raw()
        .toBuffer({ resolveWithObject: true });
      expect([info.width, info.height]).toEqual([width, height]);
      expect(data).toEqual(pixels);
    }
  });

  it('refuses a pixel count that does not match the size, and sizes below 1', () => {
    expect(() => encodeGreyPng(Buffer.alloc(10), 3, 3)).toThrow(/needs 9 bytes, got 10/);
    expect(() => encodeGreyPng(Buffer.alloc(0), 0, 0)).toThrow(/positive integers/);
  });
});
