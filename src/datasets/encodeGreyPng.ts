import { crc32, deflateSync } from 'node:zlib';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const IEND = chunk('IEND', Buffer.alloc(0));

/**
 * Encodes 8-bit greyscale pixels (row-major, `width * height` bytes) as a PNG file: IHDR, one
 * IDAT, IEND, every row with filter type 0. For images as small as MNIST's 28x28 this is about
 * 20x faster than a sharp pipeline per image, whose set-up cost dwarfs the work; a 1 kB window
 * (zlib `windowBits` 10) covers a whole 28x28 image and makes each deflate stream cheap to set up.
 */
export function encodeGreyPng(pixels: Uint8Array, width: number, height: number): Buffer {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`PNG size must be positive integers, got ${width}x${height}`);
  }
  if (pixels.length !== width * height) {
    throw new RangeError(
      `${width}x${height} greyscale needs ${width * height} bytes, got ${pixels.length}`,
    );
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 0; // colour type: greyscale
  // Compression, filter and interlace methods stay 0 (the only defined ones; no interlacing).
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) {
    // raw[y * (width + 1)] is the row's filter byte: 0, none.
    raw.set(pixels.subarray(y * width, (y + 1) * width), y * (width + 1) + 1);
  }
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(raw.length))));
  return Buffer.concat([
    SIGNATURE,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw, { windowBits, memLevel: 8 })),
    IEND,
  ]);
}

/** A PNG chunk: length, type, data, CRC-32 of type and data. */
function chunk(type: string, data: Buffer): Buffer {
  const out = Buffer.alloc(12 + data.length);
  out.writeUInt32BE(data.length, 0);
  out.write(type, 4, 'latin1');
  data.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + data.length)), 8 + data.length);
  return out;
}
