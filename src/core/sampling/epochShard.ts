import { permutation } from './permutation.js';
import { shard, type ShardRule } from './shard.js';

/** What decides a rank's samples in an epoch. */
export interface EpochShardSpec {
  /** Samples in the split. */
  n: number;
  seed: bigint;
  epoch: number;
  rank: number;
  worldSize: number;
  shardRule: ShardRule;
  shuffle: 'uniform' | 'none';
  batchSize: number;
  dropLast: boolean;
}

/** A rank's positions in one epoch, mapped to stored positions of the split. */
export interface EpochShard {
  /** Positions in the epoch for this rank (after `drop_last`). */
  length: number;
  /** Stored position (index into the split's ids) of the rank's j-th sample. */
  storedPosition(j: number): number;
}

/**
 * Composes the epoch's permutation, the rank's shard and `drop_last` (which leaves out the
 * last `length mod batchSize` positions of the shard, so the samples left out are the same
 * whatever order they would have arrived in). A pure function of its spec; `permute` lets the
 * caller cache permutations.
 */
export function epochShard(
  spec: EpochShardSpec,
  permute: (n: number, seed: bigint, epoch: number) => Uint32Array = permutation,
): EpochShard {
  const s = shard(spec.n, spec.rank, spec.worldSize, spec.shardRule);
  const length = spec.dropLast ? s.length - (s.length % spec.batchSize) : s.length;
  if (spec.shuffle === 'none') return { length, storedPosition: (j) => s.at(j) }; // no O(n) array
  const order = permute(spec.n, spec.seed, spec.epoch);
  return { length, storedPosition: (j) => order[s.at(j)]! };
}
