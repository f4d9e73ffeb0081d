import { type LoaderError, invalidArgument } from '../errors/LoaderError.js';
import { validateIdentifier } from '../schema/identifiers.js';
import { MAX_MIX_SOURCES, type MixSource, describeSource } from './MixSource.js';

/** A mixture as a request gives it, before its checks (weights as numbers, anything else). */
export interface MixInput {
  sources: readonly { dataset: string; split: string; weight: number; repeat?: boolean }[];
  samplesPerEpoch: number;
}

/** Positions of a mixed epoch at most, when the request sets samples_per_epoch. */
export const MAX_SAMPLES_PER_EPOCH = 2 ** 32 - 1;

/** What the server and the SDKs say to a request that names a mixture and a single source. */
export const SOURCES_WITH_DATASET =
  'a request names either sources (a mixture) or dataset and split, not both: put this ' +
  'dataset and split in sources';

/** INVALID_ARGUMENT for a samples_per_epoch outside [0, 2^32), as sent (`value`). */
export function samplesPerEpochOutOfRange(value: string | number): LoaderError {
  return invalidArgument(
    `samples_per_epoch ${value} is out of range: use 0 (until the source with the largest ` +
      `weight per sample is used once) or 1 to ${MAX_SAMPLES_PER_EPOCH}`,
  );
}

/**
 * Checks a mixture's sources and sizing, with the same words on the server and in the SDKs:
 * 1 to 64 sources, each a valid dataset name, a split, and a finite weight above 0 (the
 * message names the source by index and names), weights with a finite sum, no (dataset,
 * split) named twice; samples_per_epoch an integer in [0, 2^32).
 * What depends on the database (a split that does not exist, a share larger than a source
 * without repeat) is checked when the stream is planned.
 */
export function validateMix(mix: MixInput): { sources: MixSource[]; samplesPerEpoch: number } {
  const { sources } = mix;
  if (sources.length === 0) throw invalidArgument('a mixture needs at least one source');
  if (sources.length > MAX_MIX_SOURCES) {
    throw invalidArgument(
      `a mixture has at most ${MAX_MIX_SOURCES} sources, not ${sources.length}`,
    );
  }
  const spe = mix.samplesPerEpoch;
  if (!Number.isInteger(spe) || spe < 0 || spe > MAX_SAMPLES_PER_EPOCH) {
    throw samplesPerEpochOutOfRange(spe);
  }
  const checked = sources.map((s, i) => {
    const split = s.split.trim();
    const where = describeSource(i, { dataset: s.dataset, split });
    try {
      validateIdentifier(s.dataset, 'dataset');
    } catch (err) {
      throw invalidArgument(`${where}: ${(err as Error).message}`);
    }
    if (split === '') throw invalidArgument(`${where}: split is required (e.g. "all")`);
    if (!Number.isFinite(s.weight) || s.weight <= 0) {
      throw invalidArgument(`${where}: weight ${s.weight} must be a finite number above 0`);
    }
    return { dataset: s.dataset, split, weight: s.weight, repeat: s.repeat ?? false };
  });
  const total = checked.reduce((a, s) => a + s.weight, 0);
  if (!Number.isFinite(total)) {
    throw invalidArgument(
      'the weights add up to more than a number can hold; use smaller ones (only their ' +
        'ratios count)',
    );
  }
  // A split named twice would be read as two sources with orders of their own; one source
  // with the weights added is the same mixture, at half the memory.
  const first = new Map<string, number>();
  checked.forEach((s, i) => {
    const key = `${s.dataset}/${s.split}`;
    const earlier = first.get(key);
    if (earlier !== undefined) {
      throw invalidArgument(
        `${describeSource(i, s)} repeats source ${earlier}: name it once, with the weights ` +
          'added',
      );
    }
    first.set(key, i);
  });
  return { samplesPerEpoch: spe, sources: checked };
}
