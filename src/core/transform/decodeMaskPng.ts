import { inflate, inflateSync } from 'node:zlib';
import { promisify } from 'node:util';
import { UndecodableImageError } from './UndecodableImageError.js';

const inflateAsync = promisify(inflate);

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A PNG's header fields that decide whether {@link decodeMaskPng} reads it. @internal */
export interface MaskPngHeader {
  width: number;
  height: number;
  bitDepth: number;
  /** 0 grey, 3 palette (the two read here); others go to sharp. */
  colorType: number;
  interlaced: boolean;
}

/** The header of a PNG, or undefined for bytes that are not one. @internal */
export function readPngHeader(data: Buffer): MaskPngHeader | undefined {
  if (data.length < 33 || !data.subarray(0, 8).equals(SIGNATURE)) return undefined;
  if (data.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  return {
    width: data.readUInt32BE(16),
    height: data.readUInt32BE(20),
    bitDepth: data[24]!,
    colorType: data[25]!,
    interlaced: data[28] !== 0,
  };
}

/** Whether {@link decodeMaskPng} reads a PNG of this header: grey or palette, 1-8 bits. */
export function isIndexedMaskPng(h: MaskPngHeader): boolean {
  return (h.colorType === 0 || h.colorType === 3) && h.bitDepth <= 8 && !h.interlaced;
}

/**
 * Decodes a grey or palette PNG of 1 to 8 bits to one byte per pixel: the stored values (grey
 * levels, or palette indices, not their colours: a palette mask's classes are its indices).
 * Sub-byte values stay as stored (a 1-bit mask is 0 and 1). The inflated size is bounded by
 * the header's, which the caller checked against the pixel limit.
 *
 * @throws {@link UndecodableImageError} `truncated` (no IEND) or `corrupt`.
 * @internal
 */
export async function decodeMaskPng(
  data: Buffer,
  h: MaskPngHeader,
  sync: boolean,
): Promise<Buffer> {
  const idat: Buffer[] = [];
  let pos = 8;
  let ended = false;
  while (pos + 8 <= data.length) {
    const length = data.readUInt32BE(pos);
    const type = data.toString('latin1', pos + 4, pos + 8);
    const end = pos + 12 + length;
    if (end > data.length) break;
    if (type === 'IDAT') idat.push(data.subarray(pos + 8, pos + 8 + length));
    if (type === 'IEND') {
      ended = true;
      break;
    }
    pos = end;
  }
  if (!ended) {
    throw new UndecodableImageError('truncated', 'the png mask is truncated (no IEND chunk)');
  }
  const rowBytes = Math.ceil((h.width * h.bitDepth) / 8);
  const expected = (rowBytes + 1) * h.height;
  let raw: Buffer;
  try {
    // One byte over: more output than the header makes is corrupt (checked below), not a bomb.
    const options = { maxOutputLength: expected + 1 };
    raw = sync
      ? inflateSync(Buffer.concat(idat), options)
      : await inflateAsync(Buffer.concat(idat), options);
  } catch (err) {
    throw new UndecodableImageError(
      'corrupt',
      `the png mask cannot be decoded: ${(err as Error).message}`,
      { cause: err },
    );
  }
  if (raw.length !== expected) {
    throw new UndecodableImageError(
      'corrupt',
      `the png mask's pixel data is ${raw.length} bytes, its ${h.width}x${h.height} header ` +
        `makes ${expected}`,
    );
  }
  unfilter(raw, rowBytes, h.height);
  const out = Buffer.allocUnsafe(h.width * h.height);
  const perByte = 8 / h.bitDepth;
  const maxValue = (1 << h.bitDepth) - 1;
  for (let y = 0; y < h.height; y++) {
    const row = y * (rowBytes + 1) + 1;
    const at = y * h.width;
    if (h.bitDepth === 8) {
      raw.copy(out, at, row, row + h.width);
      continue;
    }
    for (let x = 0; x < h.width; x++) {
      const byte = raw[row + Math.floor(x / perByte)]!;
      const shift = 8 - h.bitDepth * ((x % perByte) + 1);
      out[at + x] = (byte >> shift) & maxValue;
    }
  }
  return out;
}

/** Undoes PNG's row filters in place (one byte per pixel step: grey and palette, <= 8 bits). */
function unfilter(raw: Buffer, rowBytes: number, height: number): void {
  const stride = rowBytes + 1;
  for (let y = 0; y < height; y++) {
    const row = y * stride + 1;
    const prev = row - stride;
    const filter = raw[row - 1]!;
    const up = (i: number): number => (y > 0 ? raw[prev + i]! : 0);
    switch (filter) {
      case 0:
        break;
      case 1:
        for (let i = 1; i < rowBytes; i++) raw[row + i] = (raw[row + i]! + raw[row + i - 1]!) & 255;
        break;
      case 2:
        if (y > 0) for (let i = 0; i < rowBytes; i++) raw[row + i] = (raw[row + i]! + up(i)) & 255;
        break;
      case 3:
        for (let i = 0; i < rowBytes; i++) {
          const left = i > 0 ? raw[row + i - 1]! : 0;
          raw[row + i] = (raw[row + i]! + ((left + up(i)) >> 1)) & 255;
        }
        break;
      case 4:
        for (let i = 0; i < rowBytes; i++) {
          const a = i > 0 ? raw[row + i - 1]! : 0;
          const b = up(i);
          const c = i > 0 && y > 0 ? raw[prev + i - 1]! : 0;
          const p = a + b - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - b);
          const pc = Math.abs(p - c);
          const pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          raw[row + i] = (raw[row + i]! + pred) & 255;
        }
        break;
      default:
        throw new UndecodableImageError(
          'corrupt',
          `the png mask has an unknown row filter ${filter} (row ${y})`,
        );
    }
  }
}
