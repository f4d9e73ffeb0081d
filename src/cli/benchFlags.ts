import { invalidArgument } from '../server/errors/LoaderError.js';
import type { Placement } from '../bench/stream/StreamBenchOptions.js';

/** A flag's value as a whole number, or INVALID_ARGUMENT naming the flag. */
export function wholeNumberFlag(flag: string, text: string): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(n)) {
    throw invalidArgument(`${flag} ${JSON.stringify(text)}: expected a whole number`);
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
