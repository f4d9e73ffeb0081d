/** Sources a mixture may have at most (a source index is one byte of a mixed schedule). */
export const MAX_MIX_SOURCES = 64;

/** One source of a mixed stream, as the request names it (validated). */
export interface MixSource {
  /** Dataset (keyspace). */
  dataset: string;
  /** Split of the dataset: `all`, `set/part` or `set@version/part`. */
  split: string;
  /** Positive, finite: the source's share is its weight over the sum of the weights. */
  weight: number;
  /** May be read more than once in one mixed epoch (a fresh permutation each pass). */
  repeat: boolean;
}

/** A source's name in messages: its position in the request and what it names. */
export function describeSource(
  index: number,
  source: Pick<MixSource, 'dataset' | 'split'>,
): string {
  return `source ${index} (dataset ${JSON.stringify(source.dataset)}, split ${JSON.stringify(source.split)})`;
}
