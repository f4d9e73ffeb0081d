import { identityPermutation, permutation } from '../sampling/permutation.js';
import { type MixedPart, mixedEpoch } from './mixedEpoch.js';
import { mixSchedule } from './mixSchedule.js';

/**
 * What a mixture's epoch sequences are made from besides the seed and the epoch. Plain data
 * (no functions), so a sequence can be made on another thread from it.
 */
export interface MixedSequenceSpec {
  /** The sources, in the request's order (see `planMixture`). */
  parts: MixedPart[];
  /** Positions each source fills per epoch (see `mixQuotas`). */
  quotas: number[];
  /** Whether each source's passes are shuffled or in stored order. */
  shuffle: 'uniform' | 'none';
}

/**
 * The mixed epoch `epoch` of a mixture as stored positions: {@link mixedEpoch} over the stride
 * schedule of `mixSchedule`, each pass of a source its permutation for that pass (the
 * identity when unshuffled). A pure function of its inputs.
 */
export function mixedSequence(spec: MixedSequenceSpec, seed: bigint, epoch: number): Uint32Array {
  // The sources' own orders are used while the sequence is made, then dropped: only the
  // sequence is kept (caching each pass of a repeated source would crowd other jobs out).
  const order = (part: MixedPart, pass: number): Uint32Array =>
    spec.shuffle === 'none'
      ? identityPermutation(part.size)
      : permutation(part.size, part.seed, pass);
  return mixedEpoch(spec.parts, mixSchedule(spec.quotas, seed, epoch), epoch, order);
}

/**
 * Work of {@link mixedSequence} in positions: the sequence, plus each source's orders (at
 * least one pass of its split, or as many as its quota takes).
 */
export function mixedSequenceWork(spec: MixedSequenceSpec): number {
  return spec.parts.reduce((a, p, i) => a + spec.quotas[i]! + p.size, 0);
}
