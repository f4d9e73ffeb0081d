import { invalidArgument } from '../errors/LoaderError.js';

/** Names of split sets and parts: lower-case letters, digits, `_` and `-`, a letter first. */
const NAME = /^[a-z][a-z0-9_-]{0,47}$/;

/** Checks a split set or part name and returns it. */
export function validateSplitName(name: string, what: 'split set' | 'part'): string {
  if (!NAME.test(name)) {
    throw invalidArgument(
      `invalid ${what} name ${JSON.stringify(name)}: use 1 to 48 lower-case letters, digits, ` +
        '"_" or "-", starting with a letter (e.g. "main" or "fold-0")',
    );
  }
  return name;
}

/** Largest split set version: versions are stored as CQL int. */
const MAX_VERSION = 2 ** 31 - 1;

/** A parsed stream split: `all`, or a part of a stored set. */
export type SplitRef =
  { kind: 'all' } | { kind: 'part'; set: string; version: number | undefined; part: string };

/**
 * Parses `all`, `set/part` (latest version) or `set@version/part`. For k-fold sets the part
 * may also be `train-<i>` (every fold but i) or `val-<i>` (fold i); those are resolved later.
 */
export function parseSplitRef(split: string): SplitRef {
  if (split === 'all') return { kind: 'all' };
  const m = /^([^@/]+)(?:@(\d+))?\/([^/]+)$/.exec(split);
  if (!m) {
    throw invalidArgument(
      `invalid split ${JSON.stringify(split)}: use "all", "<set>/<part>" or ` +
        '"<set>@<version>/<part>" (e.g. "main/train" or "cv@2/train-3")',
    );
  }
  const version = m[2] === undefined ? undefined : Number(m[2]);
  // Versions are stored as CQL int: a larger one cannot exist, and binding it made the
  // driver throw (INTERNAL) where the caller deserves to hear what is wrong.
  if (version !== undefined && version > MAX_VERSION) {
    throw invalidArgument(
      `invalid split ${JSON.stringify(split)}: version ${m[2]} is over the largest, ${MAX_VERSION}`,
    );
  }
  return {
    kind: 'part',
    set: validateSplitName(m[1]!, 'split set'),
    version,
    part: validateSplitName(m[3]!, 'part'),
  };
}
