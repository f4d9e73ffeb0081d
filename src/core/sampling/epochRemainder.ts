import type { ShardRule } from './shard.js';
import { trimmedShard } from './trimmedShard.js';

/** What one rank of a world delivered in an epoch: every position below `low`, and a set above. */
export interface DeliveredPositions {
  low: number;
  deliveredAbove: readonly number[];
}

/**
 * One world's part of an epoch: the world size and, per rank (index = rank), the positions of
 * its shard delivered. The first layer shards the whole epoch; each later one shards what the
 * layers before it left (see {@link epochRemainder}).
 */
export interface EpochLayer {
  worldSize: number;
  progress: readonly DeliveredPositions[];
}

/** The request's rules for dividing an epoch among ranks. */
export interface LayerRules {
  shardRule: ShardRule;
  batchSize: number;
  dropLast: boolean;
}

/**
 * The indices of an epoch's permutation (0..n-1) that no layer delivered, ascending: what a
 * world resuming the epoch from a job checkpoint still has to deliver. Layer 1's rank r
 * position j is permutation index `shard(n).at(j)`; a later layer's is `R[shard(|R|).at(j)]`
 * with R the remainder before it. A padded shard's repeated positions mark their index
 * delivered, which is what they are: a sample seen.
 *
 * O(n) time and n bits of scratch per layer; the result holds at most n 32-bit indices.
 */
export function epochRemainder(
  n: number,
  layers: readonly EpochLayer[],
  rules: LayerRules,
): Uint32Array {
  let remaining: Uint32Array | undefined;
  for (const layer of layers) {
    const m = remaining ? remaining.length : n;
    const delivered = new Uint8Array(Math.ceil(n / 8));
    const mark = (i: number): void => {
      delivered[i >> 3]! |= 1 << (i & 7);
    };
    if (remaining) {
      // Indices outside the remainder were delivered by an earlier layer.
      const inside = new Uint8Array(Math.ceil(n / 8));
      for (const i of remaining) inside[i >> 3]! |= 1 << (i & 7);
      for (let i = 0; i < n; i++) if (!(inside[i >> 3]! & (1 << (i & 7)))) mark(i);
    }
    layer.progress.forEach((p, rank) => {
      if (m === 0) return;
      const s = trimmedShard(
        m,
        rank,
        layer.worldSize,
        rules.shardRule,
        rules.batchSize,
        rules.dropLast,
      );
      const index = remaining ? (j: number) => remaining![s.at(j)]! : s.at;
      const below = Math.min(p.low, s.length);
      for (let j = 0; j < below; j++) mark(index(j));
      for (const j of p.deliveredAbove) if (j < s.length) mark(index(j));
    });
    let count = 0;
    for (let i = 0; i < n; i++) if (!(delivered[i >> 3]! & (1 << (i & 7)))) count++;
    const next = new Uint32Array(count);
    let k = 0;
    for (let i = 0; i < n; i++) if (!(delivered[i >> 3]! & (1 << (i & 7)))) next[k++] = i;
    remaining = next;
  }
  if (remaining) return remaining;
  const all = new Uint32Array(n);
  for (let i = 0; i < n; i++) all[i] = i;
  return all;
}
