import { RandomStream } from '../sampling/randomStream.js';
import { MAX_MIX_SOURCES } from './MixSource.js';

/**
 * Which source fills each position of a mixed epoch: `schedule[p]` is the index of position
 * p's source. A pure function of the quotas, seed and epoch.
 *
 * A stride schedule, not coin flips: source s's k-th draw (k < quota_s) is due at time
 * (k + phase_s) / quota_s in [0, 1), with a seeded phase in [0, 1) per source and epoch, and
 * positions take the draws in the order they are due (an earlier source first on a tie). Every
 * source's draws are therefore evenly spaced, so any window of w positions holds each source's
 * share of w to within about the number of sources (the count of draws due before any time is
 * within one of quota x time for every source), where independent draws would stray by the
 * square root of w. The phases keep the epochs' interleavings from being all alike.
 */
export function mixSchedule(quotas: readonly number[], seed: bigint, epoch: number): Uint8Array {
  if (quotas.length > MAX_MIX_SOURCES) {
    throw new RangeError(`a mixture has at most ${MAX_MIX_SOURCES} sources, not ${quotas.length}`);
  }
  const length = quotas.reduce((a, q) => a + q, 0);
  const out = new Uint8Array(length);
  const rng = new RandomStream('scylla-loader/mix-schedule/v1', seed, epoch, quotas.join(','));
  const phase = quotas.map(() => rng.nextUint32() / 2 ** 32);
  const drawn = new Array<number>(quotas.length).fill(0);
  const due = (s: number): number => (drawn[s]! + phase[s]!) / quotas[s]!;
  // A binary heap of the sources with draws left, earliest due first.
  const heap: number[] = [];
  const before = (a: number, b: number): boolean => {
    const da = due(a);
    const db = due(b);
    return da < db || (da === db && a < b);
  };
  const up = (i: number): void => {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) return;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  };
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  quotas.forEach((q, s) => {
    if (q > 0) {
      heap.push(s);
      up(heap.length - 1);
    }
  });
  for (let p = 0; p < length; p++) {
    const s = heap[0]!;
    out[p] = s;
    drawn[s]!++;
    if (drawn[s] === quotas[s]) {
      const last = heap.pop()!;
      if (heap.length > 0) heap[0] = last;
    }
    down(0);
  }
  return out;
}
