import { createHash } from 'node:crypto';
import type { IngestEntry } from '../../src/core/index.js';

/** Bytes of every sample of the scale benchmark's dataset. @internal */
export const SCALE_SAMPLE_BYTES = 100;

/** Classes the samples are labelled over (label = index mod this). @internal */
export const SCALE_CLASSES = 10;

/**
 * Sample `index` of the scale benchmark's dataset: exactly {@link SCALE_SAMPLE_BYTES} bytes,
 * the index as 4 big-endian bytes (so no two samples are equal) followed by SHA-256 output
 * keyed by the index (so the bytes do not compress to nothing). A pure function of `index`:
 * a resumed or repeated preparation writes the same bytes. @internal
 */
export function scaleSampleBytes(index: number): Buffer {
  if (!Number.isInteger(index) || index < 0 || index > 0xffff_ffff) {
    throw new RangeError(`sample index ${index} is out of range`);
  }
  const out = Buffer.allocUnsafe(SCALE_SAMPLE_BYTES);
  out.writeUInt32BE(index, 0);
  for (let at = 4, block = 0; at < SCALE_SAMPLE_BYTES; block++) {
    const digest = createHash('sha256').update(`scale/${index}/${block}`).digest();
    at += digest.copy(out, at, 0, Math.min(digest.length, SCALE_SAMPLE_BYTES - at));
  }
  return out;
}

/**
 * The ingest entry of sample `index`: its bytes in memory (no file), key `s<index>` padded to
 * 7 digits (the id derives from it), label `index mod {@link SCALE_CLASSES}`, no metadata.
 * @internal
 */
export function scaleIngestEntry(index: number): IngestEntry {
  const sourceKey = `s${String(index).padStart(7, '0')}`;
  return {
    sourceKey,
    filePath: `generated:${sourceKey}`,
    data: scaleSampleBytes(index),
    label: index % SCALE_CLASSES,
    metadata: {},
    origin: `scale sample ${index}`,
  };
}
