import { describe, expect, it } from 'vitest';
import type { DbPath } from '../../src/core/db/DbPath.js';
import {
  PathSelector,
  START_LATENCY_SPREAD,
  type PathState,
} from '../../src/core/fetch/PathSelector.js';
import {
  HEDGE_FACTOR,
  HEDGE_MAX_GAP_MS,
  HEDGE_MIN_MS,
  MAX_HEDGES,
  MAX_HEDGES_PER_READ,
  StragglerHedger,
} from '../../src/core/fetch/StragglerHedger.js';

/** Routes whose client is never used here: the hedger only decides, it does not read. */
function routes(...names: string[]): DbPath[] {
  return names.map((name) => ({ name }) as DbPath);
}

function setup(names = ['a', 'b']): {
  selector: PathSelector;
  hedger: StragglerHedger;
  rereads: Array<[number, string]>;
  /** The `done` of each extra read, in issue order: calling one ends that read. */
  dones: Array<() => void>;
} {
  const selector = new PathSelector(routes(...names));
  const rereads: Array<[number, string]> = [];
  const dones: Array<() => void> = [];
  const hedger = new StragglerHedger(selector, (position, path, done) => {
    rereads.push([position, path.path.name]);
    dones.push(done);
  });
  return { selector, hedger, rereads, dones };
}

const state = (selector: PathSelector, name: string): PathState =>
  selector.states.find((s) => s.path.name === name)!;

describe('StragglerHedger', () => {
  it(`waits ${HEDGE_FACTOR} x the fastest route's mean latency before a second read`, () => {
    const { selector, hedger, rereads } = setup();
    state(selector, 'a').latencyMs = 10;
    state(selector, 'b').latencyMs = 50;
    expect(hedger.thresholdMs()).toBe(HEDGE_FACTOR * 10);
    hedger.track(7, state(selector, 'a'), 1000);
    hedger.check(1000 + HEDGE_FACTOR * 10 - 1);
    expect(rereads).toEqual([]);
    hedger.check(1000 + HEDGE_FACTOR * 10);
    expect(rereads).toHaveLength(1);
    expect(rereads[0]![0]).toBe(7);
  });

  it(`never hedges a read younger than ${HEDGE_MIN_MS} ms, however fast the routes`, () => {
    const { selector, hedger, rereads } = setup();
    for (const s of selector.states) s.latencyMs = 0.5;
    expect(hedger.thresholdMs()).toBe(HEDGE_MIN_MS);
    hedger.track(1, selector.states[0]!, 0);
    hedger.check(HEDGE_MIN_MS - 0.1);
    expect(rereads).toEqual([]);
    hedger.check(HEDGE_MIN_MS);
    expect(rereads).toHaveLength(1);
  });

  it('sends the second read over another route than the first', () => {
    const { selector, hedger, rereads } = setup();
    // 'a' is the better route by score, yet the stuck read went there: the hedge avoids it.
    state(selector, 'b').latencyMs = 5;
    hedger.track(3, state(selector, 'a'), 0);
    hedger.check(1000);
    expect(rereads).toEqual([[3, 'b']]);
  });

  it(`reads a stuck sample again after twice the last gap, up to ${HEDGE_MAX_GAP_MS} ms apart, ${MAX_HEDGES_PER_READ} extra reads at most`, () => {
    const { selector, hedger, rereads, dones } = setup();
    for (const s of selector.states) s.latencyMs = 0.5; // threshold HEDGE_MIN_MS (20 ms)
    hedger.track(3, selector.states[0]!, 0);
    const times: number[] = [];
    for (let now = 0; now <= 20_000; now += 1) {
      const before = rereads.length;
      hedger.check(now);
      if (rereads.length > before) times.push(now);
      // Every extra read fails at once: the position stays stuck (its first read hangs).
      while (dones.length > 0) dones.shift()!();
    }
    // 20 ms, then gaps of 40, 80, 160, 320, 640 ms, then one a second.
    const later = Array.from({ length: MAX_HEDGES_PER_READ - 6 }, (_, i) => 2260 + 1000 * i);
    expect(times).toEqual([20, 60, 140, 300, 620, 1260, ...later]);
    expect(times).toHaveLength(MAX_HEDGES_PER_READ);
  });

  it('a read resolved by one of its extra reads gets no more', () => {
    const { selector, hedger, rereads } = setup();
    hedger.track(3, selector.states[0]!, 0);
    hedger.check(HEDGE_MIN_MS);
    hedger.settled(3); // the caller's answer to the first extra read
    hedger.check(10_000);
    expect(rereads).toHaveLength(1);
  });

  it(`after a fault that swallowed every read, reads each stuck position again within ${HEDGE_MAX_GAP_MS} ms of its end`, () => {
    // A black hole of 5 s over the only route: the first reads and every extra read issued
    // during it are lost and never end; an extra read issued after it answers at once.
    const selector = new PathSelector(routes('only'));
    for (const s of selector.states) s.latencyMs = 2;
    const faultEnd = 5_000;
    const answeredAt = new Map<number, number>();
    let now = 0;
    let extraReads = 0;
    const hedger = new StragglerHedger(selector, (position, _path, done) => {
      extraReads++;
      if (now < faultEnd) return; // lost, never ends
      done();
      if (!answeredAt.has(position)) answeredAt.set(position, now);
      hedger.settled(position);
    });
    const positions = 40;
    for (let p = 0; p < positions; p++) hedger.track(p, selector.states[0]!, p);
    for (; now <= 20_000 && answeredAt.size < positions; now += 10) hedger.check(now);
    expect(answeredAt.size).toBe(positions);
    // The last one within the longest gap plus a few checks (the live bound spreads them).
    expect(Math.max(...answeredAt.values()) - faultEnd).toBeLessThanOrEqual(HEDGE_MAX_GAP_MS + 100);
    // Extra reads were lost in the fault (at most MAX_HEDGES live a second), never past the bound.
    expect(extraReads).toBeGreaterThan(positions);
    expect(extraReads).toBeLessThanOrEqual(positions * MAX_HEDGES_PER_READ);
  });

  it('a lone stuck read is read again within a second of the end of a 5 s fault', () => {
    // Few reads in flight (a small window, the end of an epoch): nothing spreads their extra
    // reads out, and each must still be read again once the fault is over.
    const selector = new PathSelector(routes('only'));
    for (const s of selector.states) s.latencyMs = 2;
    const faultEnd = 5_000;
    let now = 0;
    const answeredAt = new Map<number, number>();
    const hedger = new StragglerHedger(selector, (position, _path, done) => {
      if (now < faultEnd) return;
      done();
      answeredAt.set(position, now);
      hedger.settled(position);
    });
    hedger.track(0, selector.states[0]!, 0);
    hedger.track(1, selector.states[0]!, 300);
    for (; now <= 20_000 && answeredAt.size < 2; now += 10) hedger.check(now);
    expect([...answeredAt.keys()].sort()).toEqual([0, 1]);
    expect(Math.max(...answeredAt.values()) - faultEnd).toBeLessThanOrEqual(HEDGE_MAX_GAP_MS + 10);
  });

  it(`reads a stuck read on a slow route again ${HEDGE_MAX_GAP_MS} ms apart after the first extra read`, () => {
    const { selector, hedger, rereads, dones } = setup(['only']);
    selector.states[0]!.latencyMs = 500; // threshold 2 s
    hedger.track(1, selector.states[0]!, 0);
    const times: number[] = [];
    for (let now = 0; now <= 5_000; now += 10) {
      const before = rereads.length;
      hedger.check(now);
      if (rereads.length > before) times.push(now);
      while (dones.length > 0) dones.shift()!();
    }
    expect(times).toEqual([2000, 3000, 4000, 5000]);
  });

  it(`an extra read ${HEDGE_MAX_GAP_MS} ms old stops counting against the ${MAX_HEDGES} in flight`, () => {
    const { selector, hedger, rereads } = setup();
    for (let p = 0; p < MAX_HEDGES + 3; p++) hedger.track(p, selector.states[0]!, 0);
    hedger.check(HEDGE_MIN_MS);
    expect(rereads).toHaveLength(MAX_HEDGES);
    expect(hedger.inFlight).toBe(MAX_HEDGES);
    // None of them ended: they are stuck like the reads they stood in for.
    hedger.check(HEDGE_MIN_MS + HEDGE_MAX_GAP_MS);
    expect(rereads.map(([p]) => p).slice(MAX_HEDGES, MAX_HEDGES + 3)).toEqual([
      MAX_HEDGES,
      MAX_HEDGES + 1,
      MAX_HEDGES + 2,
    ]);
  });

  it('leaves a read that already answered alone', () => {
    const { selector, hedger, rereads } = setup();
    hedger.track(3, selector.states[0]!, 0);
    hedger.track(4, selector.states[0]!, 0);
    hedger.settled(3);
    hedger.check(1000);
    expect(rereads.map(([p]) => p)).toEqual([4]);
  });

  it(`keeps at most ${MAX_HEDGES} second reads in flight, oldest stragglers first`, () => {
    const { selector, hedger, rereads, dones } = setup();
    for (let p = 0; p < MAX_HEDGES + 3; p++) hedger.track(p, selector.states[0]!, p);
    hedger.check(10_000);
    expect(rereads.map(([p]) => p)).toEqual([...Array(MAX_HEDGES).keys()]);
    expect(hedger.inFlight).toBe(MAX_HEDGES);
    dones[0]!();
    dones[1]!();
    dones[1]!(); // a second call of one done changes nothing
    hedger.check(10_000);
    expect(rereads.map(([p]) => p).slice(MAX_HEDGES)).toEqual([MAX_HEDGES, MAX_HEDGES + 1]);
  });

  it('stops at the first read young enough (the rest are younger)', () => {
    const { selector, hedger, rereads } = setup();
    hedger.track(1, selector.states[0]!, 0);
    hedger.track(2, selector.states[0]!, 500);
    hedger.track(3, selector.states[0]!, 0); // tracked later: never older in practice
    hedger.check(500 + HEDGE_MIN_MS - 1);
    expect(rereads.map(([p]) => p)).toEqual([1]);
  });

  it('a single route takes the second read itself', () => {
    const { selector, hedger, rereads } = setup(['only']);
    hedger.track(9, selector.states[0]!, 0);
    hedger.check(1000);
    expect(rereads).toEqual([[9, 'only']]);
  });

  it('issues nothing once stopped', () => {
    const { selector, hedger, rereads } = setup();
    hedger.start();
    hedger.track(1, selector.states[0]!, 0);
    hedger.stop();
    hedger.check(1000);
    expect(rereads).toEqual([]);
  });
});

describe('PathSelector', () => {
  it('sends a read where (reads in flight + 1) x mean latency is lowest', () => {
    const selector = new PathSelector(routes('a', 'b'));
    state(selector, 'a').latencyMs = 2;
    state(selector, 'b').latencyMs = 5;
    expect(selector.pick().path.name).toBe('a');
    state(selector, 'a').inFlight = 2; // 3 x 2 = 6 > 1 x 5
    expect(selector.pick().path.name).toBe('b');
  });

  it('avoids the excluded route unless it is the only one', () => {
    const selector = new PathSelector(routes('a', 'b'));
    state(selector, 'b').latencyMs = 100;
    expect(selector.pick(state(selector, 'a')).path.name).toBe('b');
    const single = new PathSelector(routes('a'));
    expect(single.pick(single.states[0]).path.name).toBe('a');
  });

  it('a failure counts as a slow answer, so a route failing fast loses its lead', () => {
    const selector = new PathSelector(routes('a', 'b'));
    state(selector, 'b').latencyMs = 2;
    selector.penalize(state(selector, 'a'));
    expect(state(selector, 'a').latencyMs).toBeCloseTo(0.9 * 1 + 0.1 * 100);
    expect(selector.pick().path.name).toBe('b');
  });

  it("starts from an earlier stream's latencies, so a slow route gets few first reads", () => {
    const count = (selector: PathSelector): Record<string, number> => {
      const picks: Record<string, number> = {};
      for (let i = 0; i < 100; i++) {
        const s = selector.pick();
        s.inFlight++;
        picks[s.path.name] = (picks[s.path.name] ?? 0) + 1;
      }
      return picks;
    };
    // Unknown routes share a stream's first reads evenly.
    expect(count(new PathSelector(routes('main', 'congested')))).toEqual({
      main: 50,
      congested: 50,
    });
    const started = new PathSelector(routes('main', 'congested'));
    started.startFrom([150, 1500]);
    expect(started.latencies).toEqual([150, 1500]);
    expect(count(started)).toEqual({ main: 91, congested: 9 });
    // A route that failed and has a huge latency still gets a tenth of the first reads.
    const capped = new PathSelector(routes('main', 'congested'));
    capped.startFrom([150, 1e6]);
    expect(capped.latencies).toEqual([150, 150 * START_LATENCY_SPREAD]);
    // Figures of other routes, or no figure, change nothing.
    const other = new PathSelector(routes('main', 'congested'));
    other.startFrom([150]);
    other.startFrom([Number.NaN, 0]);
    expect(other.latencies).toEqual([1, 1]);
  });

  it('refuses an empty list of routes', () => {
    expect(() => new PathSelector([])).toThrow(/at least one database path/);
  });
});
