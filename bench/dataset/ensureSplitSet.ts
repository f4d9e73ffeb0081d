import type cassandra from 'cassandra-driver';
import {
  createSplitSet,
  latestSplitVersion,
  readSplitSetInfo,
  type SplitSetInfo,
  splitTablesExist,
} from '../../src/core/index.js';

/** A benchmark's split set as {@link ensureSplitSet} found or made it. @internal */
export interface EnsuredSplitSet {
  info: SplitSetInfo;
  /** Whether this run created it (false: reused). */
  created: boolean;
  /** Seconds it took to create (0 when reused). */
  seconds: number;
}

/**
 * The benchmark split set `name` of `dataset` with `parts` (name, fraction), made by the real
 * split creation (`createSplitSet`: natural class proportions, seed 0, at most `maxTotal`
 * samples when given), or the stored one (latest version), reused since split sets never
 * change. @internal
 */
export async function ensureSplitSet(
  client: cassandra.Client,
  dataset: string,
  name: string,
  parts: [string, number][],
  options: { maxTotal?: number; signal?: AbortSignal | undefined } = {},
): Promise<EnsuredSplitSet> {
  const exists =
    (await splitTablesExist(client, dataset)) &&
    (await latestSplitVersion(client, dataset, name)) > 0;
  if (exists)
    return { info: await readSplitSetInfo(client, dataset, name), created: false, seconds: 0 };
  const started = performance.now();
  const info = await createSplitSet(
    client,
    {
      dataset,
      name,
      parts,
      folds: 0,
      groupBy: [],
      classTargets: { mode: 'natural' },
      ...(options.maxTotal !== undefined ? { maxTotal: options.maxTotal } : {}),
      filters: [],
      seed: 0n,
      newVersion: false,
      allowShortfall: false,
    },
    options.signal ? { signal: options.signal } : {},
  );
  return { info, created: true, seconds: (performance.now() - started) / 1000 };
}
