import type cassandra from 'cassandra-driver';
import { ensureSplitSet } from '../dataset/ensureSplitSet.js';

/** A split set of the scale benchmark: one part `train` of at most `cap` samples. @internal */
export interface ScaleSplit {
  /** What the stream asks for: `<set>/train`. */
  split: string;
  /** Samples asked for (the part's cap). */
  cap: number;
  /** Samples the part holds. */
  size: number;
  /** Whether this run created it (false: reused). */
  created: boolean;
}

/** Name of the split set capped at `cap` samples. @internal */
export function scaleSplitSetName(cap: number, prefix = 'scale'): string {
  return `${prefix}_n${cap}`;
}

/**
 * Makes sure the dataset has, for every cap, a split set `scale_n<cap>` with one part `train`
 * of at most `cap` samples, made by the real split creation (`createSplitSet`: natural class
 * proportions, seed 0); a stored one (latest version) is reused, since split sets never
 * change. @internal
 */
export async function prepareScaleSplits(
  client: cassandra.Client,
  dataset: string,
  caps: readonly number[],
  hooks: { log?: (line: string) => void; signal?: AbortSignal } = {},
  prefix = 'scale',
): Promise<ScaleSplit[]> {
  const out: ScaleSplit[] = [];
  for (const cap of caps) {
    const name = scaleSplitSetName(cap, prefix);
    const { info, created, seconds } = await ensureSplitSet(client, dataset, name, [['train', 1]], {
      maxTotal: cap,
      signal: hooks.signal,
    });
    const size = info.parts.find((p) => p.name === 'train')?.size ?? 0;
    if (created)
      hooks.log?.(`split set ${name}: ${size} samples, created in ${seconds.toFixed(1)} s`);
    out.push({ split: `${name}/train`, cap, size, created });
  }
  return out;
}
