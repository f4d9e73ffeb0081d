/** How a split's N samples are divided among W ranks (see DESIGN.md, Sharding). */
export type ShardRule = 'uneven' | 'pad' | 'drop';

/** One rank's share of an epoch. */
export interface Shard {
  /** Number of samples this rank sees in the epoch. */
  length: number;
  /** Index into the epoch's permutation of the rank's j-th sample (0 <= j < length). */
  at(j: number): number;
}

/**
 * Rank `rank` of `worldSize` takes every W-th position of the epoch's permutation, starting
 * at its rank (as PyTorch's DistributedSampler does):
 * - `uneven`: an exact partition; the first N mod W ranks get one sample more;
 * - `pad`: every rank gets ceil(N/W); the permutation is extended by repeating its first
 *   samples, so up to W-1 samples are seen twice in the epoch;
 * - `drop`: every rank gets floor(N/W); the last N mod W samples of the permutation are left
 *   out of the epoch.
 */
export function shard(n: number, rank: number, worldSize: number, rule: ShardRule): Shard {
  if (!Number.isInteger(worldSize) || worldSize < 1) {
    throw new RangeError(`world size must be at least 1, got ${worldSize}`);
  }
  if (!Number.isInteger(rank) || rank < 0 || rank >= worldSize) {
    throw new RangeError(`rank must be in [0, ${worldSize - 1}], got ${rank}`);
  }
  let length: number;
  switch (rule) {
    case 'uneven':
      length = Math.max(0, Math.ceil((n - rank) / worldSize));
      break;
    case 'pad':
      length = n === 0 ? 0 : Math.ceil(n / worldSize);
      break;
    case 'drop':
      length = Math.floor(n / worldSize);
      break;
  }
  return { length, at: (j) => (rank + j * worldSize) % n };
}

/** Number of batches of a shard, dropping the final partial batch when `dropLast`. */
export function batchCount(shardLength: number, batchSize: number, dropLast: boolean): number {
  return dropLast ? Math.floor(shardLength / batchSize) : Math.ceil(shardLength / batchSize);
}
