import { describe, expect, it } from 'vitest';
import type { DbPath } from '../../src/core/db/DbPath.js';
import { PathSelector, type PathState } from '../../src/core/fetch/PathSelector.js';
import {
  HEDGE_FACTOR,
  HEDGE_MIN_MS,
  MAX_HEDGES,
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
} {
  const selector = new PathSelector(routes(...names));
  const rereads: Array<[number, string]> = [];
  const hedger = new StragglerHedger(selector, (position, path) =>
    rereads.push([position, path.path.name]),
  );
  return { selector, hedger, rereads };
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

  it('reads a stuck sample a second time only once', () => {
    const { selector, hedger, rereads } = setup();
    hedger.track(3, selector.states[0]!, 0);
    hedger.check(1000);
    hedger.hedgeEnded();
    hedger.check(2000);
    expect(rereads).toHaveLength(1);
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
    const { selector, hedger, rereads } = setup();
    for (let p = 0; p < MAX_HEDGES + 3; p++) hedger.track(p, selector.states[0]!, p);
    hedger.check(10_000);
    expect(rereads.map(([p]) => p)).toEqual([...Array(MAX_HEDGES).keys()]);
    expect(hedger.inFlight).toBe(MAX_HEDGES);
    hedger.hedgeEnded();
    hedger.hedgeEnded();
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

  it('refuses an empty list of routes', () => {
    expect(() => new PathSelector([])).toThrow(/at least one database path/);
  });
});
