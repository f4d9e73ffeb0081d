import { type SettingNames, settingName } from '../config/settingNames.js';
import { createHash } from 'node:crypto';
import { invalidArgument } from '../errors/LoaderError.js';
import type { PermutationArgs, PermutationCache } from '../sampling/createPermutationCache.js';
import { MAX_PERMUTATION_SIZE } from '../sampling/permutation.js';
import type { SplitIds } from '../splits/SplitIds.js';
import { type MixedPart, sourceSeed } from './mixedEpoch.js';
import type { MixedSequenceSpec } from './mixedSequence.js';
import { mixQuotas } from './mixQuotas.js';
import type { MixSource } from './MixSource.js';

/** A mixture worked out for a stream: its epochs' length, identity and sequences. */
export interface MixturePlan {
  /** Positions of every mixed epoch (the quotas' sum). */
  length: number;
  /** Positions each source fills per epoch, in the request's order. */
  quotas: number[];
  /**
   * What a mixture's tokens and cached sequences are bound to, in place of a split's content
   * hash: every source's dataset, split, contents, weight and repeat, and the epoch sizing.
   */
  contentHash: string;
  /**
   * Where a mixed epoch's sequence is kept in the permutation cache and what it is made from
   * (`mixedSequence`): what a stream looks up to have it made off the event loop.
   */
  order(epoch: number): MixedOrder;
  /** The mixed epoch's stored positions (see `mixedEpoch`), shared through the cache. */
  sequence(epoch: number): Uint32Array;
}

/** A mixed epoch's entry in the permutation cache: its key and what it is made from. */
export interface MixedOrder {
  key: string;
  args: PermutationArgs;
}

/**
 * Plans a mixture from its sources' splits (in the request's order): the quotas
 * ({@link mixQuotas}, which refuses what cannot be mixed), and the epoch sequences, computed
 * once per process and epoch in the permutation cache (the ranks of a job share them). An
 * epoch longer than `limits.maxMixedEpoch` is INVALID_ARGUMENT, naming that setting as `names`
 * does.
 */
export function planMixture(
  mix: { sources: readonly MixSource[]; samplesPerEpoch: number },
  splits: readonly SplitIds[],
  seed: bigint,
  shuffle: 'uniform' | 'none',
  permutations: PermutationCache,
  limits: { maxMixedEpoch: number },
  names?: SettingNames,
): MixturePlan {
  const stored = splits.reduce((a, s) => a + s.count, 0);
  if (stored > MAX_PERMUTATION_SIZE) {
    throw invalidArgument(
      `the mixture's sources hold ${stored} samples together, over the limit of ` +
        `${MAX_PERMUTATION_SIZE}; mix fewer or smaller splits`,
    );
  }
  const quotas = mixQuotas(
    mix.sources.map((s, i) => ({ ...s, size: splits[i]!.count })),
    mix.samplesPerEpoch,
  );
  const length = quotas.reduce((a, q) => a + q, 0);
  if (length > limits.maxMixedEpoch) {
    throw invalidArgument(
      `a mixed epoch of ${length} positions is over the server's limit of ` +
        `${limits.maxMixedEpoch}, set by ${settingName(names, 'maxMixedEpoch')}; set a smaller ` +
        'samples_per_epoch' +
        (mix.samplesPerEpoch === 0 ? ' than the default (the sources are large)' : ''),
    );
  }
  const contentHash =
    'mixture/v1/' +
    createHash('sha256')
      .update(
        JSON.stringify([
          mix.samplesPerEpoch,
          mix.sources.map((s, i) => [
            s.dataset,
            s.split,
            splits[i]!.contentHash,
            s.weight,
            s.repeat,
          ]),
        ]),
      )
      .digest('hex');
  let offset = 0;
  const parts: MixedPart[] = splits.map((split, i) => {
    const part = { size: split.count, quota: quotas[i]!, offset, seed: sourceSeed(seed, i) };
    offset += split.count;
    return part;
  });
  const spec: MixedSequenceSpec = { parts, quotas, shuffle };
  const order = (epoch: number): MixedOrder => ({
    key: `${contentHash}/${seed}/${shuffle}/${epoch}`,
    args: { n: length, seed, epoch, mix: spec },
  });
  return {
    length,
    quotas,
    contentHash,
    order,
    sequence: (epoch) => {
      const { key, args } = order(epoch);
      return permutations.memo(key, { context: args });
    },
  };
}
