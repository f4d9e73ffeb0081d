import { createHash } from 'node:crypto';
import type { StreamRequest } from '../stream/StreamRequest.js';

/**
 * Digest of the request fields that decide which samples a job's batches hold, whatever its
 * rank, world size, epochs or ordering: its sources (datasets, splits and their content,
 * weights), batch size, seed, shard rule, shuffle, drop_last and transform. Every stream of a
 * job names the same; a stream naming a recorded job with another one is refused, so one job
 * id never mixes two jobs' batches. `contentHash` is the split's (or the mixture's).
 */
export function ledgerFingerprint(req: StreamRequest, contentHash: string): Buffer {
  const fields = {
    sources: req.mix
      ? req.mix.sources.map((s) => [s.dataset, s.split, s.weight, s.repeat])
      : [[req.dataset, req.split]],
    samplesPerEpoch: req.mix?.samplesPerEpoch ?? 0,
    contentHash,
    batchSize: req.batchSize,
    seed: req.seed.toString(),
    shardRule: req.shardRule,
    shuffle: req.shuffle,
    dropLast: req.dropLast,
    transform: req.transform ?? null,
  };
  return createHash('sha256')
    .update(`ledger/v1\n${JSON.stringify(fields)}`)
    .digest()
    .subarray(0, 16);
}
