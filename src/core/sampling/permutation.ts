import { RandomStream } from './randomStream.js';

/** Largest split a permutation supports (positions are stored as 32-bit integers). */
export const MAX_PERMUTATION_SIZE = 2 ** 32 - 1;

/**
 * The permutation of positions 0..n-1 for one (seed, epoch): a Fisher-Yates shuffle driven by
 * a ChaCha20 stream keyed by (seed, epoch, n), so every permutation is equally likely and
 * epoch k is computed directly, without replaying epochs 0..k-1. `permutation[i]` is the
 * stored position of the i-th sample of the epoch.
 */
export function permutation(n: number, seed: bigint | number, epoch: number): Uint32Array {
  if (!Number.isInteger(n) || n < 0 || n > MAX_PERMUTATION_SIZE) {
    throw new RangeError(`permutation size ${n} is out of range`);
  }
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  const rng = new RandomStream('scylla-loader/permutation/v1', BigInt(seed), epoch, n);
  for (let i = n - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    const t = out[i]!;
    out[i] = out[j]!;
    out[j] = t;
  }
  return out;
}

/** Positions 0..n-1 in stored order (shuffle mode NONE, e.g. for validation). */
export function identityPermutation(n: number): Uint32Array {
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = i;
  return out;
}
