import { crc32 } from 'node:zlib';
import type { CachedSample } from './CachedSample.js';

/** First bytes of every disk entry: the format, so another layout is never misread. */
const MAGIC = 0x534c4331; // "SLC1"
/** magic u32, crc32 u32, label i32, label blob length i32 (-1: none). */
const HEADER_BYTES = 16;

/**
 * A disk entry: a header, the label blob, then the bytes. The checksum covers the entry's key
 * (dataset identity and sample id) and everything after itself, so a damaged value, or a
 * value found under another key, is told apart from a good one.
 */
export function encodeCacheEntry(key: Buffer, sample: CachedSample): Buffer {
  const blob = sample.labelBlob;
  // Not from the shared pool: the memory tier may keep views into it.
  const out = Buffer.allocUnsafeSlow(HEADER_BYTES + (blob?.length ?? 0) + sample.data.length);
  out.writeUInt32BE(MAGIC, 0);
  out.writeInt32BE(sample.label, 8);
  out.writeInt32BE(blob ? blob.length : -1, 12);
  let at = HEADER_BYTES;
  if (blob) at += blob.copy(out, at);
  sample.data.copy(out, at);
  out.writeUInt32BE(checksum(key, out), 4);
  return out;
}

/**
 * The sample an entry holds, or undefined when it is damaged (wrong format, lengths that do
 * not add up, or a checksum that does not match): such an entry must be read again from the
 * database, never streamed. The result's buffers are views into `entry`.
 */
export function decodeCacheEntry(key: Buffer, entry: Buffer): CachedSample | undefined {
  if (entry.length < HEADER_BYTES || entry.readUInt32BE(0) !== MAGIC) return undefined;
  const blobLength = entry.readInt32BE(12);
  if (blobLength < -1 || HEADER_BYTES + Math.max(0, blobLength) > entry.length) return undefined;
  if (entry.readUInt32BE(4) !== checksum(key, entry)) return undefined;
  const dataAt = HEADER_BYTES + Math.max(0, blobLength);
  return {
    label: entry.readInt32BE(8),
    labelBlob: blobLength >= 0 ? entry.subarray(HEADER_BYTES, dataAt) : null,
    data: entry.subarray(dataAt),
  };
}

function checksum(key: Buffer, entry: Buffer): number {
  return crc32(entry.subarray(8), crc32(key));
}
