import type { StreamBatchesResponse } from '../../generated/scylla_loader/v1/StreamBatchesResponse.js';
import type { AssembledBatch } from '../../core/index.js';
import { assertBatchFits } from './assertBatchFits.js';

/**
 * Lays a batch out for the wire: ids packed 16 bytes each, sample bytes concatenated with
 * their sizes (one large field encodes and decodes faster than thousands of small ones, and
 * the client slices it without copying), label blobs likewise when the batch has any.
 * A batch over the message limit is INVALID_ARGUMENT, naming the limit.
 *
 * The server sends `encodeBatchResponse`'s bytes instead, which skip this object's
 * copies; this form remains the reference that encoder is tested against, and the layout
 * benchmark's input.
 */
export function buildBatchResponse(
  batch: AssembledBatch,
  resumeToken: Buffer,
  maxMessageBytes: number,
): { response: StreamBatchesResponse; bytes: number } {
  const n = batch.samples.length;
  const ids = Buffer.allocUnsafe(n * 16);
  const labels = new Array<number>(n);
  const dataSizes = new Array<number>(n);
  const blobSizes = new Array<number>(n);
  let dataBytes = 0;
  let blobBytes = 0;
  for (let i = 0; i < n; i++) {
    const s = batch.samples[i]!;
    s.id.copy(ids, i * 16);
    labels[i] = s.label;
    dataSizes[i] = s.data.length;
    dataBytes += s.data.length;
    blobSizes[i] = s.labelBlob?.length ?? 0;
    blobBytes += blobSizes[i]!;
  }
  assertBatchFits(n, dataBytes + blobBytes, resumeToken, maxMessageBytes);
  const data = Buffer.concat(
    batch.samples.map((s) => s.data),
    dataBytes,
  );
  const response: StreamBatchesResponse = {
    batch: {
      epoch: batch.epoch,
      index: batch.index,
      ids,
      labels,
      data,
      dataSizes,
      ...(blobBytes > 0
        ? {
            labelBlobs: Buffer.concat(
              batch.samples.map((s) => s.labelBlob ?? Buffer.alloc(0)),
              blobBytes,
            ),
            labelBlobSizes: blobSizes,
          }
        : {}),
      resumeToken,
      skippedMissing: batch.skippedMissing,
      lastInEpoch: batch.lastInEpoch,
    },
  };
  return { response, bytes: dataBytes + blobBytes };
}
