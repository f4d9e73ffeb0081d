import { status } from '@grpc/grpc-js';
import type { Batch__Output } from '../generated/scylla_loader/v1/Batch.js';
import { MAX_MIX_SOURCES } from '../core/requests.js';
import { ClientError } from './ClientError.js';
import type { DecodedBatch } from './DecodedBatch.js';
import { decodeColumns } from './decodeColumns.js';
import { uuidFromBytes } from './uuidFromBytes.js';

type FailFn = (message: string) => never;

/** Cuts `bytes` into views of `sizes`, which must cover it exactly. */
function split(bytes: Buffer, sizes: readonly number[], what: string, fail: FailFn): Buffer[] {
  const views = new Array<Buffer>(sizes.length);
  let offset = 0;
  for (let i = 0; i < sizes.length; i++) {
    const end = offset + (sizes[i] as number);
    if (end > bytes.length) {
      fail(`${what} sizes add up to more than the ${bytes.length} bytes received`);
    }
    views[i] = bytes.subarray(offset, end);
    offset = end;
  }
  if (offset !== bytes.length) {
    fail(`${what} sizes add up to ${offset} bytes but ${bytes.length} were received`);
  }
  return views;
}

/**
 * Turns a received `Batch` into a {@link DecodedBatch}: UUID strings, an `Int32Array` of
 * labels, and per-sample views (no copies) cut by `data_sizes` and `label_blob_sizes`. A batch
 * whose parts disagree (sizes that do not add up to the bytes, counts that differ) is
 * rejected with a {@link ClientError} with code DATA_LOSS naming `path`, and so is a batch of
 * a stream of `sources` sources (a mixture; 0: one split) without a source index per sample,
 * or with one of no source: its samples would be credited to the wrong dataset.
 *
 * @internal
 */
export function decodeBatch(batch: Batch__Output | null, path: string, sources = 0): DecodedBatch {
  const fail: FailFn = (message) => {
    const where = batch ? ` (epoch ${batch.epoch}, batch ${batch.index})` : '';
    throw new ClientError(path, status.DATA_LOSS, `malformed batch${where}: ${message}`);
  };
  if (!batch) {
    return fail('response without a batch');
  }
  const n = batch.dataSizes.length;
  if (batch.ids.length !== n * 16) {
    fail(`${batch.ids.length} id bytes for ${n} samples (16 each)`);
  }
  if (batch.labels.length !== n) {
    fail(`${batch.labels.length} labels for ${n} samples`);
  }
  const samples = split(batch.data, batch.dataSizes, 'data', fail);
  const sourceIndexes = batch.sourceIndexes ?? [];
  if (sourceIndexes.length !== 0 && sourceIndexes.length !== n) {
    fail(`${sourceIndexes.length} source indexes for ${n} samples`);
  }
  if (sources > 0 && sourceIndexes.length !== n) {
    fail(`no source indexes for the ${n} samples of a mixed stream`);
  }
  const limit = sources > 0 ? sources : MAX_MIX_SOURCES;
  if (sourceIndexes.some((s) => s >= limit)) {
    fail(`a source index over the stream's ${limit} sources`);
  }
  let labelBlobs: Buffer[] | undefined;
  if (batch.labelBlobSizes.length !== 0 && batch.labelBlobSizes.length !== n) {
    fail(`${batch.labelBlobSizes.length} label blob sizes for ${n} samples`);
  }
  const blobViews = split(batch.labelBlobs, batch.labelBlobSizes, 'label blob', fail);
  if (batch.labelBlobs.length > 0) {
    labelBlobs = blobViews;
  }
  let tensor: DecodedBatch['tensor'];
  if (batch.shape.length > 0 || batch.dtype !== 'D_TYPE_UNSPECIFIED') {
    if (batch.dtype !== 'D_TYPE_UINT8') fail(`unknown tensor dtype ${batch.dtype}`);
    if (batch.shape.length !== 4 || batch.shape[0] !== n) {
      fail(`tensor shape [${batch.shape.join(', ')}] for ${n} samples (want [n, h, w, c])`);
    }
    const shape = batch.shape as [number, number, number, number];
    const elements = shape[1] * shape[2] * shape[3];
    if (batch.data.length !== n * elements || batch.dataSizes.some((s) => s !== elements)) {
      fail(`${batch.data.length} data bytes for a tensor of shape [${shape.join(', ')}]`);
    }
    tensor = { data: batch.data, shape, dtype: 'uint8' };
  }
  let masks: DecodedBatch['masks'];
  if (batch.maskShape.length > 0) {
    const s = batch.maskShape;
    if (s.length !== 4 || s[0] !== n || s[3] !== 1) {
      fail(`mask shape [${s.join(', ')}] for ${n} samples (want [n, h, w, 1])`);
    }
    if (batch.masks.length !== n * s[1]! * s[2]!) {
      fail(`${batch.masks.length} mask bytes for a tensor of shape [${s.join(', ')}]`);
    }
    masks = { data: batch.masks, shape: [n, s[1]!, s[2]!, 1], dtype: 'uint8' };
  }
  const ids = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    ids[i] = uuidFromBytes(batch.ids, i * 16);
  }
  return {
    epoch: batch.epoch,
    index: batch.index,
    ids,
    idBytes: batch.ids,
    labels: Int32Array.from(batch.labels),
    sourceIndexes:
      sources > 0 || sourceIndexes.length > 0 ? Uint8Array.from(sourceIndexes) : undefined,
    data: batch.data,
    samples,
    labelBlobs,
    resumeToken: batch.resumeToken,
    skippedMissing: batch.skippedMissing,
    skippedUndecodable: batch.skippedUndecodable,
    tensor,
    masks,
    lastInEpoch: batch.lastInEpoch,
    columns: decodeColumns(batch.columns ?? [], n, fail),
  };
}
