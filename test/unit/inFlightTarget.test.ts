import { describe, expect, it } from 'vitest';
import { FetchWindow } from '../../src/core/fetch/FetchWindow.js';
import {
  InFlightTarget,
  MIN_RTT_PERIOD_MS,
  RATE_INTERVALS,
  TARGET_HEADROOM,
} from '../../src/core/fetch/InFlightTarget.js';
import { READS_PAST_THE_CAP, ReadSlots, ROUTE_MEMORY_MS } from '../../src/core/fetch/ReadSlots.js';

/**
 * A stream on a route of round trip `rttMs` that keeps `limit()` reads in flight (fewer when a
 * trainer's pace caps them at `cap`), topping them up at every answer, for `forMs` from
 * `start`. With `servers`, every read beyond that many in flight when it is issued adds
 * `queueMs` to its round trip: a busy database or CPU. Returns the limit at each multiple of
 * `rttMs` and the end time.
 */
function drive(
  limit: () => number,
  answered: (issuedAt: number, mark: number, now: number) => void,
  mark: () => number,
  opts: {
    rttMs: number;
    forMs: number;
    start?: number;
    cap?: number;
    servers?: number;
    queueMs?: number;
  },
): { seen: number[]; end: number } {
  const start = opts.start ?? 0;
  const end = start + opts.forMs;
  // Reads in flight as [answer time, issue time], kept sorted by answer time (a small heap
  // would do; the counts here are small).
  const reads: Array<[number, number, number]> = [];
  const issue = (now: number): void => {
    const want = Math.min(limit(), opts.cap ?? Infinity);
    while (reads.length < want) {
      const queued = Math.max(0, reads.length - (opts.servers ?? Infinity)) * (opts.queueMs ?? 0);
      const at = now + opts.rttMs + queued;
      let i = reads.length;
      while (i > 0 && reads[i - 1]![0] > at) i--;
      reads.splice(i, 0, [at, now, mark()]);
    }
  };
  const seen: number[] = [];
  let nextLook = start + opts.rttMs;
  issue(start);
  while (reads.length > 0 && reads[0]![0] <= end) {
    const [at, issuedAt, markAt] = reads.shift()!;
    while (nextLook <= at) {
      seen.push(limit());
      nextLook += opts.rttMs;
    }
    answered(issuedAt, markAt, at);
    issue(at);
  }
  return { seen, end };
}

/** {@link drive} for a target alone. */
function driveTarget(t: InFlightTarget, opts: Parameters<typeof drive>[3]) {
  return drive(
    () => t.value,
    (issuedAt, mark, now) => t.answered(issuedAt, mark, now),
    () => t.mark,
    opts,
  );
}

describe('InFlightTarget: reads in flight from rate x round trip (Little)', () => {
  it('doubles about every round trip while reads in flight limit the rate, up to the ceiling', () => {
    const t = new InFlightTarget(32, 4096, 0);
    const { seen } = driveTarget(t, { rttMs: 150, forMs: 150 * 12 });
    // From 32 to 4,096 is 7 doublings; each interval of a round trip at most doubles it.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeLessThanOrEqual(2 * seen[i - 1]!);
    expect(seen.findIndex((v) => v === 4096)).toBeGreaterThanOrEqual(6);
    expect(seen.findIndex((v) => v === 4096)).toBeLessThanOrEqual(9);
    expect(seen.at(-1)).toBe(4096);
  });

  it('settles at headroom x what a trainer paced below the route needs, at 150 ms as at 2 ms', () => {
    for (const [rttMs, need] of [
      [150, 150],
      [2, 40],
    ] as const) {
      const t = new InFlightTarget(32, 100_000, 0);
      // A trainer keeps `need` reads going: need / rtt samples per millisecond.
      driveTarget(t, { rttMs, forMs: rttMs * 40, cap: need });
      expect(t.value).toBeGreaterThanOrEqual(TARGET_HEADROOM * need - 2);
      expect(t.value).toBeLessThanOrEqual(TARGET_HEADROOM * need + 2);
    }
  });

  it('does not grow to the ceiling when queueing (a busy database or CPU), not the route, binds', () => {
    // A 150 ms route; beyond 200 reads in flight, each one more adds 1 ms to a read's round
    // trip, so the rate stops growing near 200 while the mean round trip keeps rising.
    const t = new InFlightTarget(32, 100_000, 0);
    const { seen } = driveTarget(t, { rttMs: 150, forMs: 150 * 60, servers: 200, queueMs: 1 });
    const last = seen.slice(-10);
    expect(Math.min(...last)).toBeGreaterThan(200);
    expect(Math.max(...last)).toBeLessThan(1000);
  });

  it("keeps the highest rate of the last intervals: a trainer's pause does not shrink it at once", () => {
    const t = new InFlightTarget(32, 100_000, 0);
    const { end } = driveTarget(t, { rttMs: 100, forMs: 100 * 30, cap: 300 });
    expect(t.value).toBeGreaterThanOrEqual(598);
    const before = t.value;
    // A pause of two seconds, then a single answer: the intervals' maximum still holds.
    t.answered(end + 2000, t.mark, end + 2100);
    expect(t.value).toBe(before);
    // Slower for good (30 reads per round trip): the target holds while the ring still has a
    // fast interval, then falls to 2 x 30.
    const { seen } = driveTarget(t, {
      rttMs: 100,
      forMs: 100 * (RATE_INTERVALS + 3),
      cap: 30,
      start: end + 2100,
    });
    expect(seen.slice(0, RATE_INTERVALS - 3).every((v) => v === before)).toBe(true);
    expect(t.value).toBeGreaterThanOrEqual(58);
    expect(t.value).toBeLessThanOrEqual(62);
  });

  it('takes the lowest recent round trip, and forgets one older than two periods', () => {
    const t = new InFlightTarget(1, 100_000, 0);
    t.answered(0, t.mark, 10);
    t.answered(10, t.mark, 40);
    expect(t.minRoundTripMs).toBe(10);
    expect(t.smoothedRoundTripMs).toBeCloseTo(10 + (30 - 10) / 8, 5);
    // Two periods later, every read taking 200 ms: the 10 ms route is gone.
    let now = 210;
    while (now < 210 + 2 * MIN_RTT_PERIOD_MS + 400) {
      t.answered(now, t.mark, now + 200);
      now += 100;
    }
    expect(t.minRoundTripMs).toBe(200);
  });

  it("weights each route's lowest round trip by its share of the answers", () => {
    const t = new InFlightTarget(1, 100_000, 0);
    // Nine answers of ten over a 10 ms route, one over a 300 ms route.
    for (let i = 0; i < 100; i++) {
      const slow = i % 10 === 0;
      t.answered(i * 20, t.mark, i * 20 + (slow ? 300 : 10), slow ? 'congested' : 'primary');
    }
    expect(t.minRoundTripMs).toBeCloseTo(0.9 * 10 + 0.1 * 300, 6);
  });

  it('moves the smoothed round trip by one clamped sample for a hung read, and forgets a long pause', () => {
    const t = new InFlightTarget(1, 100_000, 0);
    for (let i = 0; i < 20; i++) t.answered(i * 10, t.mark, i * 10 + 10);
    // A read held 12 s by a hung node counts as 2 x 10 + 20 ms at most.
    t.answered(200, t.mark, 12_200);
    expect(t.smoothedRoundTripMs).toBeCloseTo(10 + (40 - 10) / 8, 6);
    // Three periods later, every read takes 150 ms: the 10 ms of before the pause is gone.
    const later = 12_200 + 3 * MIN_RTT_PERIOD_MS;
    t.answered(later, t.mark, later + 150);
    expect(t.minRoundTripMs).toBe(150);
    // A route that got slower for good is followed within a few dozen answers.
    for (let i = 0; i < 40; i++) t.answered(later + i * 10, t.mark, later + i * 10 + 150);
    expect(t.smoothedRoundTripMs).toBeGreaterThan(140);
  });

  it('never goes below its floor nor above its ceiling', () => {
    const t = new InFlightTarget(50, 80, 0);
    expect(t.value).toBe(50);
    driveTarget(t, { rttMs: 1, forMs: 200, cap: 1 });
    expect(t.value).toBe(50);
    const far = new InFlightTarget(50, 80, 0);
    driveTarget(far, { rttMs: 100, forMs: 2000 });
    expect(far.value).toBe(80);
    expect(new InFlightTarget(50, 10, 0).value).toBe(10);
  });
});

describe('FetchWindow with a measured target', () => {
  it('says what refuses a read: window, target, ceiling, ramp', () => {
    const w = new FetchWindow({ batchSize: 10, prefetch: 10, maxInFlight: 64, inFlightFloor: 40 });
    expect(w.inFlightLimit).toBe(40);
    expect(w.refuses(100, 0)).toBe('window');
    expect(w.refuses(10, 40)).toBe('target');
    // It starts with its floor of credits (40), then earns two per completion.
    for (let i = 0; i < 40; i++) w.issued();
    expect(w.refuses(10, 32)).toBe('ramp');
    const fixed = new FetchWindow({ batchSize: 10, prefetch: 10, maxInFlight: 64 });
    expect(fixed.inFlightLimit).toBe(64);
    expect(fixed.refuses(10, 64)).toBe('ceiling');
  });

  it('starts with its floor of reads when that is above the ramp start', () => {
    const w = new FetchWindow({
      batchSize: 64,
      prefetch: 4,
      maxInFlight: 1024,
      inFlightFloor: 128,
    });
    let n = 0;
    while (w.admits(n, n)) {
      w.issued();
      n++;
    }
    expect(n).toBe(128);
  });

  it('lets more reads go as answers show the round trip needs them', () => {
    const w = new FetchWindow({
      batchSize: 10,
      prefetch: 100,
      maxInFlight: 1000,
      inFlightFloor: 32,
    });
    drive(
      () => w.inFlightLimit,
      (issuedAt, mark, now) => w.answered(issuedAt, mark, now),
      () => w.mark,
      { rttMs: 150, forMs: 150 * 5 },
    );
    expect(w.inFlightLimit).toBeGreaterThanOrEqual(200);
    expect(w.refuses(10, 100)).toBeUndefined();
  });
});

describe('ReadSlots: the process-wide cap on queries in flight', () => {
  it(`admits queries under the cap, and ${READS_PAST_THE_CAP} per stream whatever the cap`, () => {
    const slots = new ReadSlots(100);
    const a = slots.join();
    const b = slots.join();
    a.setQueries(95);
    expect(slots.used).toBe(95);
    expect(a.admits(5)).toBe(true);
    expect(a.admits(6)).toBe(false);
    // b has nothing in flight: a few queries go, the cap full or not, so it never stalls.
    expect(b.admits(READS_PAST_THE_CAP)).toBe(true);
    expect(b.admits(READS_PAST_THE_CAP + 1)).toBe(false);
    b.setQueries(READS_PAST_THE_CAP);
    expect(b.admits(1)).toBe(false);
    a.leave();
    expect(slots.used).toBe(READS_PAST_THE_CAP);
    expect(slots.streamCount).toBe(1);
    // A stream that left counts nothing more.
    a.setQueries(50);
    expect(slots.used).toBe(READS_PAST_THE_CAP);
  });

  it("shows streams' bounds, their targets summed and their mean lowest round trip", () => {
    const bounds = new Map<string, number>();
    let target = 0;
    let rtt = -1;
    const slots = new ReadSlots(100, {
      streamReadBound: {
        inc: ({ bound }, v = 1) => bounds.set(bound, (bounds.get(bound) ?? 0) + v),
      },
      readsInFlightTarget: { inc: (v) => (target += v) },
      readRoundTripMinSeconds: { set: (v) => (rtt = v) },
    });
    const a = slots.join();
    const b = slots.join();
    a.setBound('target');
    b.setBound('target');
    b.setBound('window');
    a.setTarget(300, 150);
    b.setTarget(64, 50);
    expect(Object.fromEntries(bounds)).toEqual({ target: 1, window: 1 });
    expect(target).toBe(364);
    expect(rtt).toBeCloseTo(0.1, 9);
    a.leave();
    b.leave();
    expect(Object.fromEntries(bounds)).toEqual({ target: 0, window: 0 });
    expect(target).toBe(0);
    expect(rtt).toBe(0);
  });
});

describe('a stream starts from what earlier streams on its route measured (RFC 2140)', () => {
  it('sizes its first reads from the estimate, then follows its own rate', () => {
    // A first stream, its trainer taking 300 reads per round trip of 150 ms: 2 reads per ms.
    const first = new InFlightTarget(32, 4096, 0);
    const { end } = driveTarget(first, { rttMs: 150, forMs: 150 * 12, cap: 300 });
    const estimate = first.estimate!;
    expect(estimate.minRttMs).toBe(150);
    expect(estimate.rate).toBeCloseTo(2, 1);
    // The next starts at twice rate x round trip, not at its floor of 32...
    const next = new InFlightTarget(32, 4096, end);
    next.startFrom(estimate);
    expect(next.value).toBeGreaterThanOrEqual(590);
    expect(next.value).toBeLessThanOrEqual(610);
    // ...keeps it while its own trainer takes as much...
    const same = driveTarget(next, { rttMs: 150, forMs: 150 * 4, start: end, cap: 300 });
    for (const v of same.seen) expect(v).toBeGreaterThanOrEqual(590);
    // ...and falls to what it measures once the estimate's interval has left the ring.
    driveTarget(next, { rttMs: 150, forMs: 150 * (RATE_INTERVALS + 4), start: same.end, cap: 100 });
    expect(next.value).toBeLessThanOrEqual(2 * 100 + 10);
    // An estimate is ignored once answers came, and a target never passes its ceiling.
    next.startFrom({ rate: 100, minRttMs: 150 });
    expect(next.value).toBeLessThanOrEqual(2 * 100 + 10);
    const capped = new InFlightTarget(32, 256, 0);
    capped.startFrom(estimate);
    expect(capped.value).toBe(256);
  });

  it("an estimate's round trip counts only until the stream measures its own", () => {
    // Measured at 1 ms (a near database); the route is now 150 ms away.
    const t = new InFlightTarget(32, 4096, 0);
    t.startFrom({ rate: 2, minRttMs: 1 });
    expect(t.value).toBe(32);
    t.answered(0, 0, 150);
    // The rate carries over: 2 x 2 per ms x 150 ms.
    expect(t.value).toBe(600);
  });

  it("a window's first reads and an adaptive window follow the started target", () => {
    const opts = { batchSize: 64, prefetch: 4, maxInFlight: 1024, inFlightFloor: 128 };
    const countAdmitted = (w: FetchWindow): number => {
      let n = 0;
      while (w.admits(n, n) && n < 5000) {
        w.issued();
        n++;
      }
      return n;
    };
    const follow = (w: FetchWindow, cap?: number): void => {
      drive(
        () => w.inFlightLimit,
        (issuedAt, mark, now) => w.answered(issuedAt, mark, now),
        () => w.mark,
        // A window's target starts its clock at performance.now(): so does this drive.
        {
          rttMs: 150,
          forMs: 150 * (RATE_INTERVALS + 3),
          start: performance.now(),
          ...(cap ? { cap } : {}),
        },
      );
    };
    const estimate = { rate: 2, minRttMs: 150 };
    expect(countAdmitted(new FetchWindow({ ...opts, adaptiveWindowMax: 2048 }))).toBe(128);
    const started = new FetchWindow({ ...opts, adaptiveWindowMax: 2048 });
    started.startFrom(estimate);
    expect(started.positions).toBe(600 + 2 * 64);
    expect(countAdmitted(started)).toBe(600);
    // It does not shrink within the stream, as a window grown by starving does not: a paced
    // trainer's stream keeps it (shrinking it made bench latency's paced trainer stall more).
    const paced = new FetchWindow({ ...opts, adaptiveWindowMax: 2048 });
    paced.startFrom(estimate);
    follow(paced, 30);
    expect(paced.positions).toBe(600 + 2 * 64);
    expect(paced.inFlightLimit).toBe(128);
    // Without an adaptive window, its 256 positions bound the first reads as before.
    const fixedWindow = new FetchWindow(opts);
    fixedWindow.startFrom(estimate);
    expect(fixedWindow.positions).toBe(256);
    expect(countAdmitted(fixedWindow)).toBe(256);
    // A fixed allowance of reads is not sized by round trips: nothing changes.
    const fixed = new FetchWindow({ batchSize: 64, prefetch: 4, maxInFlight: 64 });
    fixed.startFrom(estimate);
    expect(fixed.inFlightLimit).toBe(64);
    expect(countAdmitted(fixed)).toBe(32);
  });

  it('reports only its own rate, so a started rate is not handed on past its minute', () => {
    const t = new InFlightTarget(32, 4096, 0);
    t.startFrom({ rate: 10, minRttMs: 150 });
    // Its trainer takes 30 reads per round trip of 150 ms: 0.2 per ms.
    const { end } = driveTarget(t, { rttMs: 150, forMs: 150 * 3, cap: 30 });
    expect(t.value).toBeGreaterThanOrEqual(2 * 10 * 150);
    expect(t.estimate!.rate).toBeLessThan(0.5);
    // Once the started rate has left, the target is its own.
    driveTarget(t, { rttMs: 150, forMs: 150 * (RATE_INTERVALS + 2), start: end, cap: 30 });
    expect(t.value).toBeLessThanOrEqual(2 * 30 + 10);
  });

  it('keeps the fastest estimate of the last minute per route, and live streams count', () => {
    const slots = new ReadSlots(4096);
    expect(slots.recall('r', 0)).toBeUndefined();
    let measured = { rate: 3, minRttMs: 150 };
    const fast = slots.join('r', () => measured);
    // A stream reading now is recalled by the next one on its route, and on no other.
    expect(slots.recall('r', 10)).toEqual({ rate: 3, minRttMs: 150 });
    expect(slots.recall('other', 10)).toBeUndefined();
    fast.leave(1_000);
    measured = { rate: 1, minRttMs: 150 };
    const slow = slots.join('r', () => measured);
    slow.leave(2_000);
    // A slower stream ending later does not shrink the start.
    expect(slots.recall('r', 3_000)).toEqual({ rate: 3, minRttMs: 150 });
    // A stream that measured nothing adds nothing; one without a route is not kept.
    slots.join('r', () => undefined).leave(3_000);
    slots.join(undefined, () => ({ rate: 9, minRttMs: 1 })).leave(3_000);
    expect(slots.recall('r', 3_000)?.rate).toBe(3);
    // A minute after it was kept, it is forgotten.
    expect(slots.recall('r', 1_000 + ROUTE_MEMORY_MS + 1)).toBeUndefined();
    expect(slots.streamCount).toBe(0);
  });
});
