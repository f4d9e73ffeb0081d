import { type Shard, type ShardRule, shard } from './shard.js';

/**
 * A rank's {@link shard} of `n` epoch positions, with `drop_last` applied: the last
 * `length mod batchSize` positions of the shard are left out, so the samples left out are the
 * same whatever order they would have arrived in.
 */
export function trimmedShard(
  n: number,
  rank: number,
  worldSize: number,
  rule: ShardRule,
  batchSize: number,
  dropLast: boolean,
): Shard {
  const s = shard(n, rank, worldSize, rule);
  return dropLast ? { length: s.length - (s.length % batchSize), at: s.at } : s;
}
