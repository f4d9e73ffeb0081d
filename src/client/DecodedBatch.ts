import type { DecodedColumn } from './DecodedColumn.js';

/**
 * One batch of a stream, decoded. Every `Buffer` here is a view into the one buffer that
 * received the response (no copy): keeping any of them alive keeps the whole response in
 * memory, so copy (`Buffer.from(sample)`) what must outlive the batch.
 */
export interface DecodedBatch {
  /** Epoch the batch belongs to. */
  epoch: number;
  /** Index of the batch within the rank's epoch, from 0. */
  index: number;
  /** Sample ids as UUID strings, in the batch's order. */
  ids: string[];
  /** Sample ids as 16 bytes each, concatenated (as sent). */
  idBytes: Buffer;
  /** Integer label of each sample; -1 for a sample without one. */
  labels: Int32Array;
  /**
   * With `sources` (a mixture): the index in `sources` of each sample's source; undefined for
   * a single-source stream. A sample's label is its source's kind: an integer (`labels`), a
   * blob (`labelBlobs`), or none (-1 and an empty blob).
   */
  sourceIndexes: Uint8Array | undefined;
  /** Every sample's bytes, concatenated in the batch's order (`samples` are views into it). */
  data: Buffer;
  /** Each sample's bytes: `samples[i]` is a view into `data`. */
  samples: Buffer[];
  /**
   * Each sample's label blob, a view into the response (empty for a sample without one);
   * `undefined` when no sample of the batch has a label blob.
   */
  labelBlobs: Buffer[] | undefined;
  /**
   * Opaque token that resumes the stream right after this batch: pass it as
   * `resumeToken` with the same request fields to continue after a restart.
   */
  resumeToken: Buffer;
  /** Samples of this batch's share skipped because their row was missing. */
  skippedMissing: number;
  /** Samples of this batch's share skipped because they could not be decoded (transform). */
  skippedUndecodable: number;
  /**
   * With a raw transform: `data` as one uint8 tensor, `shape` [samples, height, width,
   * channels], row-major (a view, no copy); undefined for bytes as stored or re-encoded.
   */
  tensor: { data: Uint8Array; shape: [number, number, number, number]; dtype: 'uint8' } | undefined;
  /**
   * With a transform's `masks`: each sample's transformed mask, one uint8 tensor of `shape`
   * [samples, height, width, 1] (a view, no copy), aligned pixel for pixel with `tensor`;
   * undefined otherwise (`labelBlobs` is then what the server sent).
   */
  masks: { data: Uint8Array; shape: [number, number, number, 1]; dtype: 'uint8' } | undefined;
  /** True on the rank's last batch of the epoch. */
  lastInEpoch: boolean;
  /** The metadata columns the request asked for, by name (empty when it asked for none). */
  columns: Record<string, DecodedColumn>;
}
