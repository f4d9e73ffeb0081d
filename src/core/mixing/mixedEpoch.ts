import { createHash } from 'node:crypto';

/** What the positions of one source in a mixed epoch are computed from. */
export interface MixedPart {
  /** Samples in the source's split. */
  size: number;
  /** Positions of the mixed epoch the source fills (see `mixQuotas`). */
  quota: number;
  /** Where the source's stored positions start in the mixture's (sources laid end to end). */
  offset: number;
  /** Seed of the source's permutations (see {@link sourceSeed}). */
  seed: bigint;
}

/**
 * The seed of a source's permutations: the stream's seed and the source's index, hashed, so
 * two sources of one size do not share an order.
 */
export function sourceSeed(seed: bigint, index: number): bigint {
  const h = createHash('sha256').update(`scylla-loader/mix-source/v1\u0000${seed}\u0000${index}`);
  return h.digest().readBigUInt64BE(0);
}

/**
 * Which pass of a source, and which index of that pass's permutation, its k-th draw of mixed
 * epoch `epoch` is (k < quota):
 *
 * - quota <= size (sub-sampled, or exactly once): a pass spans q = ceil(size / quota) epochs,
 *   each taking the next slice of `quota` indices of its permutation, the last slice wrapping
 *   round to the pass's start: so no sample comes twice within an epoch (a slice is at most
 *   the permutation's length), every sample comes in each pass, and q x quota - size of them
 *   (those the last slice takes again from the start) twice in it;
 * - quota > size (repeat): the epoch takes ceil(quota / size) passes of its own, each a fresh
 *   permutation delivering every sample once, the last one cut short.
 */
export function sourceDraw(
  part: Pick<MixedPart, 'size' | 'quota'>,
  epoch: number,
  k: number,
): { pass: number; index: number } {
  const { size, quota } = part;
  if (quota <= size) {
    const q = Math.ceil(size / quota);
    return { pass: Math.floor(epoch / q), index: ((epoch % q) * quota + k) % size };
  }
  const passes = Math.ceil(quota / size);
  return { pass: epoch * passes + Math.floor(k / size), index: k % size };
}

/**
 * A mixed epoch as the mixture's stored positions: entry p is the stored position (the
 * source's offset plus its index in the source's split) of the sample at position p, for the
 * sources `schedule` (see `mixSchedule`) assigns to positions. `order(part, pass)` is the
 * source's permutation for a pass (its `seed` and `size`; the identity when unshuffled).
 * Positions are what everything downstream shards, fetches and resumes, as a split's
 * permutation is for a single source.
 */
export function mixedEpoch(
  parts: readonly MixedPart[],
  schedule: Uint8Array,
  epoch: number,
  order: (part: MixedPart, pass: number) => Uint32Array,
): Uint32Array {
  const out = new Uint32Array(schedule.length);
  const drawn = new Array<number>(parts.length).fill(0);
  // The pass being read, per source: consecutive draws stay in one pass for `size` draws.
  const current = parts.map(() => ({ pass: -1, perm: new Uint32Array(0) as Uint32Array }));
  for (let p = 0; p < schedule.length; p++) {
    const s = schedule[p]!;
    const part = parts[s]!;
    const { pass, index } = sourceDraw(part, epoch, drawn[s]!++);
    const cur = current[s]!;
    if (cur.pass !== pass) {
      cur.pass = pass;
      cur.perm = order(part, pass);
    }
    out[p] = part.offset + cur.perm[index]!;
  }
  return out;
}
