import type { AssembledBatch } from '../../core/index.js';
import { allocFramedMessage } from '../framing/allocFramedMessage.js';
import { assertBatchFits } from './assertBatchFits.js';

// Tags of `StreamBatchesResponse` and `Batch` (proto/scylla_loader/v1/loader.proto): field
// number << 3 | wire type (0 varint, 2 length-delimited). All fit in one byte.
const TAG_BATCH = 0x0a; // 1, length-delimited
const TAG_EPOCH = 0x08; // 1, varint
const TAG_INDEX = 0x10; // 2, varint
const TAG_IDS = 0x1a; // 3, bytes
const TAG_LABELS = 0x22; // 4, packed sint32
const TAG_DATA = 0x2a; // 5, bytes
const TAG_DATA_SIZES = 0x32; // 6, packed uint32
const TAG_LABEL_BLOBS = 0x3a; // 7, bytes
const TAG_LABEL_BLOB_SIZES = 0x42; // 8, packed uint32
const TAG_RESUME_TOKEN = 0x4a; // 9, bytes
const TAG_SKIPPED_MISSING = 0x50; // 10, varint
const TAG_LAST_IN_EPOCH = 0x58; // 11, varint (bool)
const TAG_SHAPE = 0x62; // 12, packed uint32
const TAG_DTYPE = 0x68; // 13, varint (enum)
const TAG_SKIPPED_UNDECODABLE = 0x70; // 14, varint
const TAG_SOURCE_INDEXES = 0x7a; // 15, packed uint32
// Fields 16 on take two-byte tags.
const TAG_MASKS = [0x82, 0x01] as const; // 16, bytes
const TAG_MASK_SHAPE = [0x8a, 0x01] as const; // 17, packed uint32
const DTYPE_UINT8 = 1; // D_TYPE_UINT8

/**
 * Encodes a batch as a `scylla_loader.v1.StreamBatchesResponse`, the bytes grpc-js sends
 * as they are (see the StreamBatches serializer in `createLoaderServer`). The message is
 * sized first and allocated once; each sample's data and label blob are copied once, straight
 * into it. Building the response object instead cost two more copies of every sample (our
 * concatenation, then protobufjs's writer), and their garbage, on the loader's hottest path.
 * The buffer has the gRPC frame header in front (`allocFramedMessage`), so grpc-js sends it
 * without copying it once more.
 *
 * The layout is that of `buildBatchResponse` (ids packed 16 bytes each, sample bytes
 * concatenated with their sizes, label blobs only when the batch has any), so clients decode
 * it with the ordinary generated code. Fields come in number order, packed where repeated,
 * and proto3 defaults (0, false, empty) are left out: protobufjs writes them when the object
 * sets them, which decodes to the same message.
 *
 * With `tensor` (a raw transform's height, width and channels), `data` is one contiguous
 * uint8 tensor and the batch carries its shape (samples first) and dtype; every sample must
 * be exactly one element of it. A `mixed` stream's batch carries each sample's source index
 * (each below 64: one byte). With `masks` (a raw transform's masks), each sample's label blob
 * is its transformed mask, `height x width` bytes: they go out as the `masks` tensor of shape
 * (samples, height, width, 1) instead of label blobs. `columns` is the batch's
 * `Batch.columns` fields, encoded already (`encodeColumns`): they go last, and count toward
 * the message limit.
 *
 * @returns The encoded message, and the batch's sample and label blob bytes (for metrics).
 * @throws {@link LoaderError} INVALID_ARGUMENT when the batch may exceed `maxMessageBytes`.
 */
export function encodeBatchResponse(
  batch: AssembledBatch,
  resumeToken: Buffer,
  maxMessageBytes: number,
  tensor?: readonly [number, number, number],
  mixed = false,
  columns?: Buffer,
  masks = false,
): { message: Buffer; bytes: number } {
  if (masks && !tensor) throw new Error('masks without a raw tensor');
  const { samples } = batch;
  const n = samples.length;
  // The same coercions as protobufjs's `fromObject`, so both encode the same values.
  const epoch = batch.epoch >>> 0;
  const index = batch.index >>> 0;
  const skippedMissing = batch.skippedMissing >>> 0;
  const skippedUndecodable = batch.skippedUndecodable >>> 0;
  const shape = tensor ? [n, ...tensor] : [];
  const sampleElements = tensor ? tensor[0] * tensor[1] * tensor[2] : 0;
  let shapeLength = 0;
  for (const d of shape) shapeLength += varintSize(d);
  const maskShape = masks && tensor ? [n, tensor[0], tensor[1], 1] : [];
  const maskElements = masks && tensor ? tensor[0] * tensor[1] : 0;
  let maskShapeLength = 0;
  for (const d of maskShape) maskShapeLength += varintSize(d);

  let dataBytes = 0;
  let blobBytes = 0;
  let labelsLength = 0;
  let dataSizesLength = 0;
  let blobSizesLength = 0;
  for (let i = 0; i < n; i++) {
    const s = samples[i]!;
    const blob = s.labelBlob?.length ?? 0;
    if (tensor && s.data.length !== sampleElements) {
      throw new Error(
        `a raw sample of ${s.data.length} bytes in a batch of ${tensor.join('x')} samples`,
      );
    }
    if (masks && blob !== maskElements) {
      throw new Error(`a mask of ${blob} bytes in a batch of ${maskShape.join('x')} masks`);
    }
    dataBytes += s.data.length;
    blobBytes += blob;
    labelsLength += varintSize(zigzag(s.label));
    dataSizesLength += varintSize(s.data.length);
    blobSizesLength += varintSize(blob);
  }
  const columnBytes = columns?.length ?? 0;
  assertBatchFits(n, dataBytes + blobBytes + columnBytes, resumeToken, maxMessageBytes);
  const withBlobs = blobBytes > 0 && !masks;
  const withMasks = blobBytes > 0 && masks;

  const inner =
    (epoch !== 0 ? 1 + varintSize(epoch) : 0) +
    (index !== 0 ? 1 + varintSize(index) : 0) +
    (n > 0 ? lengthDelimitedSize(n * 16) : 0) +
    (n > 0 ? lengthDelimitedSize(labelsLength) : 0) +
    (dataBytes > 0 ? lengthDelimitedSize(dataBytes) : 0) +
    (n > 0 ? lengthDelimitedSize(dataSizesLength) : 0) +
    (withBlobs ? lengthDelimitedSize(blobBytes) + lengthDelimitedSize(blobSizesLength) : 0) +
    (resumeToken.length > 0 ? lengthDelimitedSize(resumeToken.length) : 0) +
    (skippedMissing !== 0 ? 1 + varintSize(skippedMissing) : 0) +
    (batch.lastInEpoch ? 2 : 0) +
    (tensor ? lengthDelimitedSize(shapeLength) + 2 : 0) +
    (skippedUndecodable !== 0 ? 1 + varintSize(skippedUndecodable) : 0) +
    (mixed && n > 0 ? lengthDelimitedSize(n) : 0) +
    (withMasks ? 1 + lengthDelimitedSize(blobBytes) : 0) +
    (masks ? 1 + lengthDelimitedSize(maskShapeLength) : 0) +
    columnBytes;
  const size = lengthDelimitedSize(inner);
  const out = allocFramedMessage(size);

  let pos = 0;
  out[pos++] = TAG_BATCH;
  pos = writeVarint(out, pos, inner);
  if (epoch !== 0) {
    out[pos++] = TAG_EPOCH;
    pos = writeVarint(out, pos, epoch);
  }
  if (index !== 0) {
    out[pos++] = TAG_INDEX;
    pos = writeVarint(out, pos, index);
  }
  if (n > 0) {
    out[pos++] = TAG_IDS;
    pos = writeVarint(out, pos, n * 16);
    for (let i = 0; i < n; i++) {
      const id = samples[i]!.id;
      out.set(id, pos);
      pos += id.length;
    }
    out[pos++] = TAG_LABELS;
    pos = writeVarint(out, pos, labelsLength);
    for (let i = 0; i < n; i++) pos = writeVarint(out, pos, zigzag(samples[i]!.label));
  }
  if (dataBytes > 0) {
    out[pos++] = TAG_DATA;
    pos = writeVarint(out, pos, dataBytes);
    for (let i = 0; i < n; i++) {
      const data = samples[i]!.data;
      out.set(data, pos);
      pos += data.length;
    }
  }
  if (n > 0) {
    out[pos++] = TAG_DATA_SIZES;
    pos = writeVarint(out, pos, dataSizesLength);
    for (let i = 0; i < n; i++) pos = writeVarint(out, pos, samples[i]!.data.length);
  }
  if (withBlobs) {
    out[pos++] = TAG_LABEL_BLOBS;
    pos = writeVarint(out, pos, blobBytes);
    for (let i = 0; i < n; i++) {
      const blob = samples[i]!.labelBlob;
      if (blob) {
        out.set(blob, pos);
        pos += blob.length;
      }
    }
    out[pos++] = TAG_LABEL_BLOB_SIZES;
    pos = writeVarint(out, pos, blobSizesLength);
    for (let i = 0; i < n; i++) pos = writeVarint(out, pos, samples[i]!.labelBlob?.length ?? 0);
  }
  if (resumeToken.length > 0) {
    out[pos++] = TAG_RESUME_TOKEN;
    pos = writeVarint(out, pos, resumeToken.length);
    out.set(resumeToken, pos);
    pos += resumeToken.length;
  }
  if (skippedMissing !== 0) {
    out[pos++] = TAG_SKIPPED_MISSING;
    pos = writeVarint(out, pos, skippedMissing);
  }
  if (batch.lastInEpoch) {
    out[pos++] = TAG_LAST_IN_EPOCH;
    out[pos++] = 1;
  }
  if (tensor) {
    out[pos++] = TAG_SHAPE;
    pos = writeVarint(out, pos, shapeLength);
    for (const d of shape) pos = writeVarint(out, pos, d);
    out[pos++] = TAG_DTYPE;
    out[pos++] = DTYPE_UINT8;
  }
  if (skippedUndecodable !== 0) {
    out[pos++] = TAG_SKIPPED_UNDECODABLE;
    pos = writeVarint(out, pos, skippedUndecodable);
  }
  if (mixed && n > 0) {
    out[pos++] = TAG_SOURCE_INDEXES;
    pos = writeVarint(out, pos, n);
    for (let i = 0; i < n; i++) out[pos++] = samples[i]!.source;
  }
  if (withMasks) {
    out[pos++] = TAG_MASKS[0];
    out[pos++] = TAG_MASKS[1];
    pos = writeVarint(out, pos, blobBytes);
    for (let i = 0; i < n; i++) {
      const mask = samples[i]!.labelBlob!;
      out.set(mask, pos);
      pos += mask.length;
    }
  }
  if (masks) {
    out[pos++] = TAG_MASK_SHAPE[0];
    out[pos++] = TAG_MASK_SHAPE[1];
    pos = writeVarint(out, pos, maskShapeLength);
    for (const d of maskShape) pos = writeVarint(out, pos, d);
  }
  // Field 18, after 16 and 17.
  if (columns !== undefined) {
    out.set(columns, pos);
    pos += columns.length;
  }
  // The buffer is uninitialised memory: a size and a write that disagree (an id not 16 bytes
  // long) would send stale heap bytes, so that is an error rather than a malformed batch.
  if (pos !== size) {
    throw new Error(`encoded ${pos} bytes of a ${size}-byte StreamBatchesResponse`);
  }
  return { message: out, bytes: dataBytes + blobBytes };
}

/** A `sint32` as its unsigned zigzag varint value (-1 is 1, 1 is 2), after protobufjs's `| 0`. */
function zigzag(value: number): number {
  const v = value | 0;
  return ((v << 1) ^ (v >> 31)) >>> 0;
}

/** Bytes of the varint of a non-negative integer (any safe integer, not only 32-bit). */
function varintSize(value: number): number {
  if (value < 0x80) return 1;
  if (value < 0x4000) return 2;
  if (value < 0x200000) return 3;
  if (value < 0x10000000) return 4;
  let size = 5;
  for (let v = Math.floor(value / 0x800000000); v > 0; v = Math.floor(v / 0x80)) size++;
  return size;
}

/** Bytes of a one-byte tag, the varint length and `length` bytes of payload. */
function lengthDelimitedSize(length: number): number {
  return 1 + varintSize(length) + length;
}

/** Writes `value` (a non-negative safe integer) as a varint at `pos`; returns the next position. */
function writeVarint(out: Buffer, pos: number, value: number): number {
  let v = value;
  while (v > 0x7f) {
    // `& 0x7f` keeps the low 7 bits even above 2^32 (ToInt32 works modulo 2^32); `>>> 7`
    // would not, so larger values divide instead.
    out[pos++] = (v & 0x7f) | 0x80;
    v = v > 0xffffffff ? Math.floor(v / 0x80) : v >>> 7;
  }
  out[pos++] = v;
  return pos;
}
