import type cassandra from 'cassandra-driver';
import {
  createSplitSet,
  invalidArgument,
  latestSplitVersion,
  readSplitSetInfo,
  splitTablesExist,
} from '../../src/core/index.js';

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
  const exists =
    (await splitTablesExist(client, dataset)) &&
    (await latestSplitVersion(client, dataset, name)) > 0;
  const started = performance.now();
  const info = exists
    ? await readSplitSetInfo(client, dataset, name)
    : await createSplitSet(
        client,
        {
          dataset,
          name,
          parts: weights.map((w, i): [string, number] => [`p${i}`, w]),
          folds: 0,
          groupBy: [],
          classTargets: { mode: 'natural' },
          filters: [],
          seed: 0n,
          newVersion: false,
          allowShortfall: false,
        },
        hooks.signal ? { signal: hooks.signal } : {},
      );
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
    exists
      ? `split set ${name}: reused, parts of ${sizes} samples`
      : `split set ${name}: parts of ${sizes} samples, created in ` +
          `${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { name, sources, created: !exists };
}
