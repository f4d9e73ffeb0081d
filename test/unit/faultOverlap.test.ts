import { describe, expect, it } from 'vitest';
import { overlapMs } from '../faults/runScenario.js';

describe('overlapMs (a wait less its time under faults)', () => {
  it('counts only the part of the wait under a fault', () => {
    expect(overlapMs(1000, 7000, [{ fromMs: 2000, toMs: 4000 }])).toBe(2000);
    expect(overlapMs(1000, 3000, [{ fromMs: 2000, toMs: 4000 }])).toBe(1000);
    expect(overlapMs(5000, 7000, [{ fromMs: 2000, toMs: 4000 }])).toBe(0);
  });

  it('merges overlapping windows and ignores instants', () => {
    const windows = [
      { fromMs: 2000, toMs: 4000 },
      { fromMs: 3000, toMs: 5000 },
      { fromMs: 6000, toMs: 6000 },
    ];
    expect(overlapMs(0, 10_000, windows)).toBe(3000);
  });

  it('adds separate windows', () => {
    const windows = [
      { fromMs: 1000, toMs: 2000 },
      { fromMs: 4000, toMs: 6000 },
    ];
    expect(overlapMs(1500, 5000, windows)).toBe(500 + 1000);
  });
});
