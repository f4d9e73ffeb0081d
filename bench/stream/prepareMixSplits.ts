import type cassandra from 'cassandra-driver';
import { invalidArgument } from '../../src/core/index.js';
import { ensureSplitSet } from '../dataset/ensureSplitSet.js';

/** One source of the mixture `bench stream --sources` streams: a part of the bench dataset. */
export interface MixSplitSource {
  /** What the stream asks for: `<set>/p<i>`. */
  split: string;
  weight: number;
  /** Samples the part holds. */
  size: number;
}

/** The split set of a mixture and its parts, as {@link prepareMixSplits} found or made it. */
export interface MixSplits {
  name: string;
  sources: MixSplitSource[];
  /** Whether this run created the set (false: reused). */
  created: boolean;
}

/**
 * Name of the split set whose parts the weights `weights` mix: `mix5_3_2` for 5,3,2 (a
 * decimal point becomes `p`: `mix0p5_1`). @internal
 */
export function mixSplitSetName(weights: readonly number[]): string {
  return `mix${weights.map((w) => String(w).replace('.', 'p')).join('_')}`;
}

/**
 * Makes sure the dataset has the split set {@link mixSplitSetName} with parts `p0`, `p1`, ...
 * sized by `weights` (the real split creation, `createSplitSet`: natural class proportions,
 * seed 0, every sample in one part), so a mixture of its parts by the same weights reads each
 * part about once in an epoch of the dataset's size: the same samples as a stream of split
 * `all`, from several sources. A stored set (latest version) is reused, since split sets never
 * change. @internal
 */
export async function prepareMixSplits(
  client: cassandra.Client,
  dataset: string,
  weights: readonly number[],
  hooks: { log?: (line: string) => void; signal?: AbortSignal | undefined } = {},
): Promise<MixSplits> {
  const name = mixSplitSetName(weights);
  const parts = weights.map((w, i): [string, number] => [`p${i}`, w]);
  const { info, created, seconds } = await ensureSplitSet(client, dataset, name, parts, {
    signal: hooks.signal,
  });
  const sources = weights.map((weight, i) => ({
    split: `${name}/p${i}`,
    weight,
    size: info.parts.find((p) => p.name === `p${i}`)?.size ?? 0,
  }));
  const sizes = sources.map((s) => s.size).join(' / ');
  if (sources.some((s) => s.size === 0)) {
    throw invalidArgument(
      `split set ${name} of ${dataset} has an empty part (${sizes} samples): give weights ` +
        'closer together or more --samples',
    );
  }
  hooks.log?.(
    created
      ? `split set ${name}: parts of ${sizes} samples, created in ${seconds.toFixed(1)} s`
      : `split set ${name}: reused, parts of ${sizes} samples`,
  );
  return { name, sources, created };
}
