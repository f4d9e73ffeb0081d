import { ALL_SPLIT, type SplitSetInfo } from '../../core/index.js';

/**
 * The split names a stream can ask for: `all`, then `<set>/<part>` for every part of each
 * set's latest version and, for a k-fold set, `<set>/train-<i>` and `<set>/val-<i>`. Older
 * versions stay streamable as `<set>@<version>/<part>` but are not listed.
 *
 * @internal
 */
export function streamableSplits(sets: readonly SplitSetInfo[]): string[] {
  const latest = new Map<string, SplitSetInfo>();
  for (const s of sets) {
    const seen = latest.get(s.name);
    if (!seen || s.version > seen.version) latest.set(s.name, s);
  }
  const names = [ALL_SPLIT];
  for (const s of [...latest.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    for (const p of s.parts) names.push(`${s.name}/${p.name}`);
    for (let i = 0; i < s.folds; i++) names.push(`${s.name}/train-${i}`, `${s.name}/val-${i}`);
  }
  return names;
}
