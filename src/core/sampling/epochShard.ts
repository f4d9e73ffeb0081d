import { permutation } from './permutation.js';
import type { ShardRule } from './shard.js';
import { trimmedShard } from './trimmedShard.js';

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
  /** Position in the epoch's order (0 to n - 1, before sharding) of the rank's j-th sample. */
  epochPosition(j: number): number;
}

/**
 * Composes the epoch's permutation, the rank's shard and `drop_last` (see
 * {@link trimmedShard}). A pure function of its spec; `permute` lets the caller cache
 * permutations.
 *
 * With `remainder` (an epoch resumed from a job checkpoint at another world size), the rank
 * shards only those indices of the epoch's permutation, in their order: the positions of the
 * epoch the old world had not delivered (see `epochRemainder`).
 */
export function epochShard(
  spec: EpochShardSpec,
  permute: (n: number, seed: bigint, epoch: number) => Uint32Array = permutation,
  remainder?: Uint32Array,
): EpochShard {
  const m = remainder ? remainder.length : spec.n;
  const s = trimmedShard(
    m,
    spec.rank,
    spec.worldSize,
    spec.shardRule,
    spec.batchSize,
    spec.dropLast,
  );
  const index = remainder ? (j: number) => remainder[s.at(j)]! : s.at;
  // No O(n) array when positions are in stored order, or when the rank has none this epoch
  // (a world larger than the split would otherwise pay a permutation per empty epoch).
  if (spec.shuffle === 'none' || s.length === 0) {
    return { length: s.length, storedPosition: index, epochPosition: index };
  }
  const order = permute(spec.n, spec.seed, spec.epoch);
  return { length: s.length, storedPosition: (j) => order[index(j)]!, epochPosition: index };
}
