import type { DbConfig } from '../../src/core/index.js';
import type { CacheSweep } from './CacheBenchReport.js';
import { readLoaderCounters } from './loaderCounters.js';
import { epochLine, measureEpoch, type CacheBenchRun } from './measureEpoch.js';
import type { CacheTiers } from './startCacheServe.js';
import { withCacheLoader } from './withCacheLoader.js';

/**
 * A sweep: `jobs` jobs of seeds `firstSeed`, `firstSeed + 1`, ... stream epoch 0 of the split
 * at once through one fresh loader with a fresh cache (`tiers`). What the loader read from the
 * database (cache misses: samples no stream had nor was reading) over the split's size says
 * how well the jobs shared their reads. @internal
 */
export async function measureSweep(
  run: CacheBenchRun,
  options: {
    db: DbConfig;
    tiers: CacheTiers;
    dataset: string;
    samples: number;
    jobs: number;
    firstSeed: number;
    rttMs: number;
  },
): Promise<CacheSweep> {
  const { samples, rttMs } = options;
  const label = `sweep of ${options.jobs} jobs, ${rttMs} ms`;
  return withCacheLoader(run, options.db, options.tiers, label, async (serve) => {
    const before = (await readLoaderCounters(serve.metricsAddress)).counters;
    const jobs = Array.from({ length: options.jobs }, (_, j) => ({
      seed: options.firstSeed + j,
      epoch: 0,
    }));
    const m = await measureEpoch(run, serve, options, before, jobs);
    const sweep: CacheSweep = {
      rttMs,
      jobs: options.jobs,
      samples,
      epoch: m.epoch,
      dbSamplesPerSplitSample: m.epoch.reads.cacheMisses / samples,
      dbQueriesPerSplitSample: m.epoch.reads.dbQueries / samples,
      jobSamplesPerSecond: m.jobRates,
    };
    run.log(
      `${label}: ${epochLine(m.epoch)}; read from the database: ` +
        `${sweep.dbSamplesPerSplitSample.toFixed(3)}x the split`,
    );
    return sweep;
  });
}
