import { describe, expect, it } from 'vitest';
import { adaptiveWindowMax } from '../../src/core/fetch/adaptiveWindowMax.js';
import { FetchWindow, RAMP_START } from '../../src/core/fetch/FetchWindow.js';

/** Issues reads while the window admits them (nothing held, nothing else in flight), counting. */
function issueAll(w: FetchWindow, inFlight: number): number {
  let n = 0;
  while (w.admits(inFlight + n, inFlight + n)) {
    w.issued();
    n++;
  }
  return n;
}

describe('FetchWindow: window and span', () => {
  it('holds prefetch x batch size positions and reaches twice that above the lowest unresolved', () => {
    const w = new FetchWindow({ batchSize: 16, prefetch: 3, maxInFlight: 1000 });
    expect(w.positions).toBe(48);
    expect(w.span).toBe(96);
    expect(w.reaches(100 + 95, 100)).toBe(true);
    expect(w.reaches(100 + 96, 100)).toBe(false);
  });

  it('never holds fewer than one position', () => {
    const w = new FetchWindow({ batchSize: 16, prefetch: 0, maxInFlight: 1000 });
    expect(w.positions).toBe(1);
    expect(w.span).toBe(2);
  });

  it('admits a read only while occupancy is under the window and requests under the limit', () => {
    const w = new FetchWindow({ batchSize: 10, prefetch: 2, maxInFlight: 5 });
    expect(w.admits(19, 4)).toBe(true);
    expect(w.admits(20, 4)).toBe(false); // window full
    expect(w.admits(3, 5)).toBe(false); // in-flight limit (retries waiting count too)
  });
});

describe('FetchWindow: ramp', () => {
  it(`starts with ${RAMP_START} reads, then two new reads per one completed: doubling each round trip`, () => {
    const w = new FetchWindow({ batchSize: 100, prefetch: 4, maxInFlight: 256 });
    let inFlight = issueAll(w, 0);
    expect(inFlight).toBe(RAMP_START);
    // A round trip: every read in flight completes, each earning two.
    for (const expected of [64, 128, 256]) {
      const completing = inFlight;
      for (let i = 0; i < completing; i++) w.completed();
      inFlight = issueAll(w, 0);
      expect(inFlight).toBe(expected);
    }
    // At the in-flight limit, completions only replace what completed.
    for (let i = 0; i < 10; i++) w.completed();
    expect(issueAll(w, 256 - 10)).toBe(10);
  });

  it('a single completion earns two reads at once', () => {
    const w = new FetchWindow({ batchSize: 100, prefetch: 4, maxInFlight: 256 });
    let inFlight = issueAll(w, 0);
    const issued: number[] = [];
    for (let i = 0; i < 4; i++) {
      w.completed();
      inFlight--;
      const n = issueAll(w, inFlight);
      inFlight += n;
      issued.push(n);
    }
    expect(issued).toEqual([2, 2, 2, 2]);
  });

  it('starts with fewer reads when the in-flight limit is lower, and never banks more', () => {
    const w = new FetchWindow({ batchSize: 100, prefetch: 4, maxInFlight: 8 });
    expect(issueAll(w, 0)).toBe(8);
    // Completions beyond the limit earn nothing more than the limit's worth of credit.
    for (let i = 0; i < 100; i++) w.completed();
    expect(issueAll(w, 0)).toBe(8);
  });
});

describe('FetchWindow: adaptive growth', () => {
  const batchSize = 10;
  /** A window of 30 that may grow to 60, with a batch of completed reads behind it. */
  function starving(max = 60, maxInFlight = 100): FetchWindow {
    const w = new FetchWindow({ batchSize, prefetch: 3, adaptiveWindowMax: max, maxInFlight });
    for (let i = 0; i < batchSize; i++) w.completed();
    return w;
  }

  it('grows by a batch, and the span with it, when healthy reads in flight fill the window', () => {
    const w = starving();
    expect(w.growIfStarved(30, 30, 0, false)).toBe(true);
    expect(w.positions).toBe(40);
    expect(w.span).toBe(80);
  });

  it('grows while less than a batch of arrived samples shares the window', () => {
    expect(starving().growIfStarved(30, 21, 0, false)).toBe(true);
    // A batch of arrived samples: the trainer, not the window, is what the stream waits for.
    expect(starving().growIfStarved(30, 20, 0, false)).toBe(false);
  });

  it('does not grow while the window is not full', () => {
    expect(starving().growIfStarved(29, 29, 0, false)).toBe(false);
  });

  it('does not grow while a read waits out a retry', () => {
    expect(starving().growIfStarved(30, 29, 1, false)).toBe(false);
  });

  it("does not grow once the epoch's last read is issued", () => {
    expect(starving().growIfStarved(30, 30, 0, true)).toBe(false);
  });

  it('does not grow when the in-flight limit, not the window, bounds the reads', () => {
    expect(starving(60, 30).growIfStarved(30, 30, 0, false)).toBe(false);
  });

  it('with grouped reads, the in-flight limit counts queries, not positions', () => {
    // 30 positions in flight in 3 queries of 10: far below a limit of 20 queries.
    expect(starving(60, 20).growIfStarved(30, 30, 0, false, 3)).toBe(true);
    expect(starving(60, 20).growIfStarved(30, 30, 0, false, 20)).toBe(false);
  });

  it('grows at most once per batch of completed reads', () => {
    const w = starving();
    expect(w.growIfStarved(30, 30, 0, false)).toBe(true);
    for (let i = 0; i < batchSize - 1; i++) w.completed();
    expect(w.growIfStarved(40, 40, 0, false)).toBe(false);
    w.completed();
    expect(w.growIfStarved(40, 40, 0, false)).toBe(true);
    expect(w.positions).toBe(50);
  });

  it('does not grow at the start, before a batch of reads completed', () => {
    const w = new FetchWindow({ batchSize, prefetch: 3, adaptiveWindowMax: 60, maxInFlight: 100 });
    expect(w.growIfStarved(30, 30, 0, false)).toBe(false);
  });

  it('stops at its maximum, even mid-batch, and never shrinks', () => {
    const w = starving(45);
    expect(w.growIfStarved(30, 30, 0, false)).toBe(true);
    for (let i = 0; i < batchSize; i++) w.completed();
    expect(w.growIfStarved(40, 40, 0, false)).toBe(true);
    expect(w.positions).toBe(45);
    for (let i = 0; i < batchSize; i++) w.completed();
    expect(w.growIfStarved(45, 45, 0, false)).toBe(false);
    expect(w.positions).toBe(45);
    expect(w.span).toBe(90);
  });

  it('never grows without an adaptive maximum', () => {
    const w = new FetchWindow({ batchSize, prefetch: 3, maxInFlight: 100 });
    for (let i = 0; i < batchSize; i++) w.completed();
    expect(w.growIfStarved(30, 30, 0, false)).toBe(false);
    expect(w.positions).toBe(30);
  });
});

describe('adaptiveWindowMax', () => {
  const limits = { maxPrefetch: 64, maxWindowSamples: 65_536, maxInFlightPerStream: 256 };

  it('is the in-flight allowance plus two batches when that is the tightest bound', () => {
    expect(adaptiveWindowMax(128, limits)).toBe(256 + 2 * 128);
  });

  it('stays within the largest prefetch and the per-stream window limit', () => {
    expect(adaptiveWindowMax(2, limits)).toBe(64 * 2);
    expect(adaptiveWindowMax(128, { ...limits, maxInFlightPerStream: 100_000 })).toBe(8192);
    expect(adaptiveWindowMax(8192, { ...limits, maxInFlightPerStream: 100_000 })).toBe(65_536);
  });
});
