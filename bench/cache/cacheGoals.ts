import type { CacheEpoch, CacheGoal, CacheLeg, CacheSweep } from './CacheBenchReport.js';

/** The warm epochs' rate (1 and later): their samples over their wall time. @internal */
export function warmSamplesPerSecond(epochs: readonly CacheEpoch[]): number {
  const warm = epochs.filter((e) => e.epoch > 0);
  const wall = warm.reduce((s, e) => s + e.wallSeconds, 0);
  return wall > 0 ? warm.reduce((s, e) => s + e.samples, 0) / wall : Number.NaN;
}

/** Hits over look ups of the warm epochs together. @internal */
export function warmHitRatio(epochs: readonly CacheEpoch[]): number {
  let hits = 0;
  let lookups = 0;
  for (const { epoch, reads: r } of epochs) {
    if (epoch === 0) continue;
    hits += r.cacheHitsMemory + r.cacheHitsDisk;
    lookups += r.cacheHitsMemory + r.cacheHitsDisk + r.cacheMisses + r.cacheSharedReads;
  }
  return lookups > 0 ? hits / lookups : Number.NaN;
}

const rate = (x: number): string => Math.round(x).toLocaleString('en-US');

/**
 * The cache's goals, as ratios measured in this run:
 *
 * - warm epochs at the high round trip with a cache against the warm epochs at 0 ms without
 *   one: >= 1.0x (a cache hides the database's distance entirely);
 * - per round trip, database read queries of the busiest warm epoch against the cold epoch's,
 *   with a cache: <= 1%;
 * - the sweep: samples read from the database over the split's size: <= 1.05x (jobs share
 *   reads instead of each reading the split).
 *
 * @internal
 */
export function cacheGoals(legs: readonly CacheLeg[], sweep: CacheSweep): CacheGoal[] {
  const goals: CacheGoal[] = [];
  const leg = (cached: boolean, rttMs: number): CacheLeg | undefined =>
    legs.find((l) => l.cached === cached && l.rttMs === rttMs);
  const highRtt = Math.max(...legs.map((l) => l.rttMs));
  const cachedHigh = leg(true, highRtt);
  const uncached0 = leg(false, 0);
  if (cachedHigh && uncached0) {
    const a = warmSamplesPerSecond(cachedHigh.epochs);
    const b = warmSamplesPerSecond(uncached0.epochs);
    goals.push({
      goal: `warm epochs at ${highRtt} ms with the cache, against warm epochs at 0 ms without`,
      target: '>= 1.0x',
      measured: `${(a / b).toFixed(2)}x (${rate(a)} vs ${rate(b)} samples/s)`,
      value: a / b,
      met: a / b >= 1,
    });
  }
  for (const l of legs.filter((x) => x.cached)) {
    const cold = l.epochs.find((e) => e.epoch === 0);
    const warm = l.epochs.filter((e) => e.epoch > 0);
    if (!cold || warm.length === 0) continue;
    const most = Math.max(...warm.map((e) => e.reads.dbQueries));
    const share = cold.reads.dbQueries > 0 ? most / cold.reads.dbQueries : Number.NaN;
    goals.push({
      goal: `database queries of a warm epoch against the cold one, cache, ${l.rttMs} ms`,
      target: '<= 1%',
      measured: `${(100 * share).toFixed(2)}% (${rate(most)} of ${rate(cold.reads.dbQueries)})`,
      value: share,
      met: share <= 0.01,
    });
  }
  const x = sweep.dbSamplesPerSplitSample;
  goals.push({
    goal: `${sweep.jobs}-job sweep at ${sweep.rttMs} ms: samples read from the database over the split`,
    target: '<= 1.05x',
    measured: `${x.toFixed(3)}x (${rate(sweep.epoch.reads.cacheMisses)} of ${rate(sweep.samples)})`,
    value: x,
    met: x <= 1.05,
  });
  return goals;
}
