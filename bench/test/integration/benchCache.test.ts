import { describe, expect, it } from 'vitest';
import type { CacheBenchReport } from '../../cache/runCacheBench.js';
import { benchHarness, expectDocsWritten, expectNoChildLeft } from './benchHarness.js';

// The split twice the cache (32 MiB) is a second keyspace, `<dataset>_x2`; the harness drops both.
const bench = benchHarness('cache');
/** Samples of 20 kB: above `--group-reads-max-bytes`, so every database query reads one. */
const SAMPLE_BYTES = 20_000;
const N = 1000;

describe('bench cache --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here. What the loader
  // read from the database, counted by its metrics, is.
  it(
    'measures cold and warm epochs, the sweep and a split twice the cache; no process left',
    { timeout: 240_000 },
    async () => {
      const result = await bench.run<CacheBenchReport>(
        'cache',
        ['--sample-bytes', String(SAMPLE_BYTES)],
        { docs: 'cache' },
      );
      const { report, stdout } = result;
      expect(stdout).toMatch(/^\| cache \| RTT ms \| epoch \| samples\/s \|/m);
      expect(stdout).toMatch(/^\| goal \| target \| measured \| result \|$/m);
      const dataset = bench.dataset;

      expect(report.dataset).toMatchObject({ name: dataset, samples: N, totalBytes: N * 20_000 });
      expect(report.settings).toMatchObject({ rttsMs: [0, 150], epochs: 3, jobs: 4 });
      expect(report.notes).toEqual([]);
      expect(report.legs.map((l) => `${l.cached ? 'cache' : 'none'} ${l.rttMs}`)).toEqual([
        'none 0',
        'cache 0',
        'none 150',
        'cache 150',
      ]);
      for (const leg of report.legs) {
        expect(leg.epochs.map((e) => e.epoch)).toEqual([0, 1, 2]);
        for (const e of leg.epochs) {
          expect(e.exactlyOnce).toBe(true);
          expect(e.samples).toBe(N);
          expect(e.samplesPerSecond).toBeGreaterThan(0);
          expect(Number.isFinite(e.samplesPerSecond)).toBe(true);
          // One stream per epoch, its end line logged; 20 kB samples are read one per query.
          expect(e.streamEnds).toHaveLength(1);
          expect(e.streamEnds[0]!.groupReads).toBe(1);
          if (!leg.cached) {
            // Every sample of every epoch comes from the database, warm or not.
            expect(e.reads.dbQueries).toBeGreaterThanOrEqual(N);
            expect(e.hitRatio).toBeUndefined();
            expect(e.reads.cacheMisses + e.reads.cacheHitsMemory + e.reads.cacheHitsDisk).toBe(0);
            continue;
          }
          // Every position is looked up once: a hit, a miss or another stream's read.
          const r = e.reads;
          expect(r.cacheHitsMemory + r.cacheHitsDisk + r.cacheMisses + r.cacheSharedReads).toBe(N);
          expect(e.streamEnds[0]).toMatchObject({
            cacheHits: r.cacheHitsMemory + r.cacheHitsDisk,
            cacheMisses: r.cacheMisses,
          });
          if (e.epoch === 0) {
            // A fresh cache: the cold epoch reads every sample from the database.
            expect(r.cacheMisses).toBe(N);
            expect(r.dbQueries).toBeGreaterThanOrEqual(N);
          } else {
            // The cache holds the split: warm epochs hardly touch the database.
            expect(r.cacheMisses).toBeLessThanOrEqual(N / 100);
            expect(r.dbQueries * 10).toBeLessThan(leg.epochs[0]!.reads.dbQueries);
            expect(e.hitRatio).toBeGreaterThanOrEqual(0.99);
            expect(r.evictionsMemory + r.evictionsDisk).toBe(0);
          }
        }
      }

      // The sweep: 4 jobs read each sample from the database about once between them.
      const { sweep } = report;
      expect(sweep.epoch.exactlyOnce).toBe(true);
      expect(sweep.epoch.samples).toBe(4 * N);
      expect(sweep.jobSamplesPerSecond).toHaveLength(4);
      expect(sweep.epoch.streamEnds).toHaveLength(4);
      const s = sweep.epoch.reads;
      expect(s.cacheHitsMemory + s.cacheHitsDisk + s.cacheMisses + s.cacheSharedReads).toBe(4 * N);
      expect(s.cacheMisses).toBeGreaterThanOrEqual(N);
      expect(sweep.dbSamplesPerSplitSample).toBeLessThanOrEqual(1.05);

      // The split twice the cache: 32 MiB against a 16 MiB disk tier, no memory tier.
      const { oversize } = report;
      expect(oversize.dataset).toBe(`${dataset}_x2`);
      expect(oversize.diskBoundBytes).toBeGreaterThanOrEqual(16 * 2 ** 20);
      expect(oversize.splitBytes).toBeGreaterThanOrEqual(2 * oversize.diskBoundBytes);
      for (const e of oversize.epochs) {
        expect(e.exactlyOnce).toBe(true);
        expect(e.samples).toBe(oversize.samples);
        expect(e.reads.cacheHitsMemory).toBe(0);
        expect(e.gauges.cacheDiskEnabled).toBe(1);
      }
      expect(oversize.epochs[0]!.reads.cacheMisses).toBe(oversize.samples);
      // It cannot hold the split: the warm epochs still read most of it.
      expect(oversize.warmHitRatio).toBeGreaterThanOrEqual(0);
      expect(oversize.warmHitRatio).toBeLessThanOrEqual(0.6);
      expect(oversize.epochs.slice(1).every((e) => e.reads.dbQueries > 0)).toBe(true);
      // The store exists and keeps its bound.
      expect(Math.max(...oversize.dataFileBytes)).toBeGreaterThan(0);
      expect(oversize.dataFileOverBound).toBeLessThanOrEqual(1);

      // Goals: four, each with a verdict; the run succeeds whatever they say.
      expect(report.goals).toHaveLength(4);
      for (const g of report.goals) expect(typeof g.met).toBe('boolean');
      expect(report.goals.filter((g) => g.goal.startsWith('database queries'))).toHaveLength(2);

      // Toxiproxy and seven loaders (the warm-up, four legs, the sweep, the split twice the
      // cache), all gone.
      expect(report.childPids).toContain(report.toxiproxyPid);
      expectNoChildLeft(report.childPids, 8);

      expectDocsWritten(result.page, 'cache', 'cache', [
        /^\| cache \| RTT ms \| epoch \|/m,
        /^\| goal \| target \| measured \| result \|$/m,
      ]);
    },
  );
});
