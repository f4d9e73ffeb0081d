import type { PermutationArgs } from '../sampling/createPermutationCache.js';

/**
 * The key of an epoch's permutation in the process's `PermutationCache`: the split's contents
 * and every input of the permutation, so two splits of one size never share an entry.
 */
export function permutationKey(splitContentHash: string, args: PermutationArgs): string {
  return `${splitContentHash}/${args.n}/${args.seed}/${args.epoch}`;
}

/**
 * The key of a re-sharded epoch's remainder in the process's `RemainderCache`: the split's
 * contents and the job checkpoint's digest (which names its epoch, worlds and tokens).
 */
export function remainderKey(splitContentHash: string, checkpointDigest: Buffer): string {
  return `${splitContentHash}/${checkpointDigest.toString('hex')}`;
}
