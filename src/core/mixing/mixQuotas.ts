import { invalidArgument } from '../errors/LoaderError.js';
import { MAX_PERMUTATION_SIZE } from '../sampling/permutation.js';
import { describeSource } from './MixSource.js';

/**
 * Passes of one source a mixed epoch may take at most: each is a permutation to compute, so a
 * tiny source with a huge share would cost more than the epoch's reads.
 */
export const MAX_PASSES_PER_EPOCH = 10_000;

/** What a source's share of a mixed epoch is computed from. */
export interface QuotaInput {
  dataset: string;
  split: string;
  weight: number;
  repeat: boolean;
  /** Samples in the source's split. */
  size: number;
}

/**
 * How many positions of a mixed epoch each source fills (its quota), in the request's order.
 *
 * - `samplesPerEpoch` 0: the epoch lasts until the source with the largest weight per sample
 *   has delivered each of its samples once; that source's quota is its size, every other's is
 *   its weight's share of it, rounded, which is never more than its size (no source repeats;
 *   the others are sub-sampled).
 * - `samplesPerEpoch` L: the quotas are L's shares by weight, apportioned by largest remainder
 *   (they sum to exactly L, each within one of its exact share; ties go to the earlier
 *   source). A quota larger than its source needs `repeat`, else INVALID_ARGUMENT naming the
 *   source and the ways out.
 *
 * A source without samples, a source whose quota rounds to 0 (it would never be seen), or an
 * epoch larger than a permutation can be, is INVALID_ARGUMENT.
 */
export function mixQuotas(sources: readonly QuotaInput[], samplesPerEpoch: number): number[] {
  sources.forEach((s, i) => {
    if (s.size === 0) {
      throw invalidArgument(`${describeSource(i, s)} has no samples; leave it out of the mixture`);
    }
  });
  const total = sources.reduce((a, s) => a + s.weight, 0);
  let quotas: number[];
  if (samplesPerEpoch === 0) {
    let f = 0;
    for (let i = 1; i < sources.length; i++) {
      // Largest weight per sample: w_i / n_i > w_f / n_f, compared without dividing.
      if (sources[i]!.weight * sources[f]!.size > sources[f]!.weight * sources[i]!.size) f = i;
    }
    const lead = sources[f]!;
    quotas = sources.map((s, i) =>
      i === f ? s.size : Math.min(s.size, Math.round((lead.size * s.weight) / lead.weight)),
    );
  } else {
    const exact = sources.map((s) => samplesPerEpoch * (s.weight / total));
    quotas = exact.map(Math.floor);
    let left = samplesPerEpoch - quotas.reduce((a, q) => a + q, 0);
    const order = exact
      .map((x, i) => ({ i, frac: x - Math.floor(x) }))
      .sort((a, b) => b.frac - a.frac || a.i - b.i);
    for (const { i } of order) {
      if (left <= 0) break;
      quotas[i]!++;
      left--;
    }
    sources.forEach((s, i) => {
      if (quotas[i]! > s.size && !s.repeat) {
        throw invalidArgument(
          `${describeSource(i, s)} would fill ${quotas[i]} positions of a mixed epoch of ` +
            `${samplesPerEpoch} but has ${s.size} samples: set repeat on it, lower ` +
            'samples_per_epoch, or lower its weight',
        );
      }
      if (quotas[i]! > s.size * MAX_PASSES_PER_EPOCH) {
        throw invalidArgument(
          `${describeSource(i, s)} would be read ${Math.ceil(quotas[i]! / s.size)} times in ` +
            `one mixed epoch (at most ${MAX_PASSES_PER_EPOCH}): lower samples_per_epoch or its ` +
            'weight',
        );
      }
    });
  }
  sources.forEach((s, i) => {
    if (!Number.isSafeInteger(quotas[i])) {
      throw new RangeError(`quota ${quotas[i]} of ${describeSource(i, s)} is not an integer`);
    }
    if (quotas[i] === 0) {
      throw invalidArgument(
        `${describeSource(i, s)} would fill no position of the mixed epoch (its weight's ` +
          'share rounds to 0): raise its weight' +
          (samplesPerEpoch === 0 ? '' : ' or samples_per_epoch') +
          ', or leave it out',
      );
    }
  });
  const length = quotas.reduce((a, q) => a + q, 0);
  if (length > MAX_PERMUTATION_SIZE) {
    throw invalidArgument(
      `a mixed epoch of ${length} positions is over the limit of ${MAX_PERMUTATION_SIZE}; ` +
        'set a smaller samples_per_epoch',
    );
  }
  return quotas;
}
