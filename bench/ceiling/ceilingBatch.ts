import { randomBytes } from 'node:crypto';
import type { AssembledBatch } from '../../src/core/index.js';
import { encodeBatchResponse } from '../../src/server/index.js';

/** Shape of the batch `bench ceiling` serves from memory. @internal */
export interface CeilingBatchShape {
  samples: number;
  sampleBytes: number;
}

/**
 * One batch of `samples` random samples of `sampleBytes` each (with 16-byte ids, labels and a
 * 64-byte resume token, as the service sends), encoded once as the wire bytes of a
 * `StreamBatchesResponse` by the service's own encoder. Random bytes: nothing on either leg
 * compresses, so their content does not matter.
 *
 * @returns The encoded message and its sample bytes.
 * @internal
 */
export function encodeCeilingBatch(shape: CeilingBatchShape): { message: Buffer; bytes: number } {
  const samples = Array.from({ length: shape.samples }, (_, i) => ({
    position: i,
    id: randomBytes(16),
    label: i % 1000,
    labelBlob: null,
    data: randomBytes(shape.sampleBytes),
  }));
  const batch = {
    epoch: 0,
    index: 0,
    samples,
    skippedMissing: 0,
    lastInEpoch: false,
    firstArrivalAt: 0,
  } as unknown as AssembledBatch; // `resume` only feeds the token, which is passed as bytes
  return encodeBatchResponse(batch, randomBytes(64), 2 ** 31 - 1);
}
