import { describe, expect, it } from 'vitest';
import { checkHistory, emptyHistory, type FaultHistory } from '../faults/checkHistory.js';

const id = (n: number): string => n.toString(16).padStart(32, '0');
const split = Array.from({ length: 10 }, (_, i) => id(i));

/** A history where epoch e's ranks got `byRank[r]` (sample numbers). */
function history(byEpoch: Record<number, number[][]>): FaultHistory {
  const h = emptyHistory();
  for (const [epoch, ranks] of Object.entries(byEpoch)) {
    ranks.forEach((nums, rank) => (h.deliveries[`${epoch}/${rank}`] = nums.map(id)));
  }
  return h;
}

describe('checkHistory', () => {
  it('passes a history where the ranks of every epoch partition the split', () => {
    const v = checkHistory(
      history({
        0: [
          [0, 2, 4, 6, 8],
          [1, 3, 5, 7, 9],
        ],
        1: [
          [9, 8, 7, 6, 5],
          [4, 3, 2, 1, 0],
        ],
      }),
      { splitIds: split, firstEpoch: 0, epochs: 2 },
    );
    expect(v).toMatchObject({ lost: 0, duplicated: 0, foreign: 0, delivered: 20, ok: true });
    expect(v.expectedPerEpoch).toBe(10);
  });

  it('counts a sample no rank got as lost, in every epoch it is missing from', () => {
    const v = checkHistory(
      history({
        0: [
          [0, 1, 2, 3],
          [4, 5, 6],
        ],
        1: [[0, 1, 2, 3, 4, 5, 6, 7, 8]],
      }),
      {
        splitIds: split,
        firstEpoch: 0,
        epochs: 2,
      },
    );
    expect(v.lost).toBe(3 + 1);
    expect(v.ok).toBe(false);
  });

  it('counts repeats within a rank and across ranks, once per extra delivery', () => {
    const v = checkHistory(
      history({
        3: [
          [0, 1, 2, 3, 4, 4, 4],
          [5, 6, 7, 8, 9, 0],
        ],
      }),
      { splitIds: split, firstEpoch: 3, epochs: 1 },
    );
    expect(v).toMatchObject({ lost: 0, duplicated: 3, foreign: 0, ok: false });
  });

  it('does not take the same id in two epochs for a repeat', () => {
    const v = checkHistory(history({ 0: [[...split.keys()]], 1: [[...split.keys()]] }), {
      splitIds: split,
      firstEpoch: 0,
      epochs: 2,
    });
    expect(v.duplicated).toBe(0);
    expect(v.ok).toBe(true);
  });

  it('counts ids outside the split as foreign and epochs outside the range apart', () => {
    const v = checkHistory(history({ 0: [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 77]], 5: [[1, 2]] }), {
      splitIds: split,
      firstEpoch: 0,
      epochs: 1,
    });
    expect(v).toMatchObject({ lost: 0, duplicated: 0, foreign: 1, outOfRange: 2, ok: false });
  });

  it('reports an epoch nobody streamed as wholly lost', () => {
    const v = checkHistory(history({ 0: [[...split.keys()]] }), {
      splitIds: split,
      firstEpoch: 0,
      epochs: 2,
    });
    expect(v.lost).toBe(10);
  });

  it('sums up stalls, reconnects by code and failed ranks', () => {
    const h = history({ 0: [[...split.keys()]] });
    h.waits.push({ rank: 0, epoch: 0, atMs: 10, ms: 5 }, { rank: 1, epoch: 0, atMs: 20, ms: 1234 });
    h.reconnects.push(
      { rank: 0, code: 'UNAVAILABLE', atMs: 1, details: '' },
      { rank: 1, code: 'UNAVAILABLE', atMs: 2, details: '' },
      { rank: 1, code: 'RESOURCE_EXHAUSTED', atMs: 3, details: '' },
    );
    h.failures.push({ rank: 1, code: 'DATA_LOSS', details: 'x' });
    const v = checkHistory(h, { splitIds: split, firstEpoch: 0, epochs: 1 });
    expect(v.longestStallMs).toBe(1234);
    expect(v.reconnects).toBe(3);
    expect(v.reconnectsByCode).toEqual({ UNAVAILABLE: 2, RESOURCE_EXHAUSTED: 1 });
    expect(v.failedRanks).toBe(1);
    expect(v.ok).toBe(false);
  });
});
