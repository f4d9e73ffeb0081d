import { readFile } from 'node:fs/promises';

/** An IDX file's contents: dimensions and raw unsigned bytes. */
export interface IdxArray {
  dims: number[];
  data: Buffer;
}

/**
 * Reads an IDX file (the MNIST format: magic 0x00 0x00 0x08 <ndims>, then big-endian 32-bit
 * dimensions, then unsigned bytes). Only the unsigned-byte element type is supported, which is
 * what MNIST uses.
 */
export async function readIdx(file: string): Promise<IdxArray> {
  const buf = await readFile(file);
  if (buf.length < 4 || buf[0] !== 0 || buf[1] !== 0) {
    throw new Error(`${file} is not an IDX file`);
  }
  if (buf[2] !== 0x08) throw new Error(`${file}: only unsigned-byte IDX files are supported`);
  const ndims = buf[3]!;
  const dims = Array.from({ length: ndims }, (_, i) => buf.readUInt32BE(4 + 4 * i));
  const offset = 4 + 4 * ndims;
  const expected = dims.reduce((a, b) => a * b, 1);
  if (buf.length - offset !== expected) {
    throw new Error(`${file}: expected ${expected} bytes of data, found ${buf.length - offset}`);
  }
  return { dims, data: buf.subarray(offset) };
}
