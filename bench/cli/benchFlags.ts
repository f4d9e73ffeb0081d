import { invalidArgument } from '../../src/core/index.js';
import type { Placement } from '../stream/StreamBenchOptions.js';

/** A flag's value as a whole number (at least `min` when given), or INVALID_ARGUMENT. */
export function wholeNumberFlag(flag: string, text: string, min?: number): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(n) || (min !== undefined && n < min)) {
    throw invalidArgument(
      `${flag} ${JSON.stringify(text)}: expected a whole number${min === undefined ? '' : ` >= ${min}`}`,
    );
  }
  return n;
}

/** `--placements unpinned,pinned` as a list, or INVALID_ARGUMENT. */
export function placementsFlag(text: string): Placement[] {
  const out = text.split(',').map((p) => p.trim());
  for (const p of out) {
    if (p !== 'unpinned' && p !== 'pinned') {
      throw invalidArgument(`--placements ${text}: use unpinned, pinned or unpinned,pinned`);
    }
  }
  return out as Placement[];
}
