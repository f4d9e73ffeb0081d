import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { LatencyBenchReport } from '../../latency/runLatencyBench.js';
import { benchHarness, expectNoChildLeft, expectRatesAgree } from './benchHarness.js';

const bench = benchHarness('latency');

describe('bench latency --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it(
    'measures B and C through toxiproxy and leaves no process behind',
    { timeout: 180_000 },
    async () => {
      const { report } = await bench.run<LatencyBenchReport>('latency');

      // B and C at 0 and 20 ms on the main route, and at 20 ms with the congested route.
      expect(
        report.summary.map((r) => `${r.placement} ${r.scenario} ${r.routes} ${r.rttMs}`).sort(),
      ).toEqual([
        'unpinned B main 0',
        'unpinned B main 20',
        'unpinned B main+congested 20',
        'unpinned C main 0',
        'unpinned C main 20',
        'unpinned C main+congested 20',
      ]);
      // Every row has a full-speed run and a paced-trainer run: at 80% of the round's C at
      // 0 ms on the main route, at 750 samples/s with the congested route.
      expect(report.settings.trainer).toEqual({ share: 0.8, congestedSamplesPerSecond: 750 });
      expect(report.runs.filter((r) => r.pace === 'trainer').length).toBe(6);
      for (const run of report.runs.filter((r) => r.pace === 'trainer')) {
        const c0 = report.runs.find(
          (r) => r.pace === 'max' && r.scenario === 'C' && r.routes === 'main' && r.rttMs === 0,
        )!;
        const rate = run.routes === 'main' ? 0.8 * c0.samplesPerSecond : 750;
        expect(run.stepMs).toBeCloseTo((1000 * 32) / rate, 6);
        // A paced trainer cannot consume faster than its pace.
        expect(run.samplesPerSecond).toBeLessThan(rate * 1.05);
        expect(run.stallFraction).toBeGreaterThanOrEqual(0);
        expect(run.stallFraction).toBeLessThan(1);
        // Where the stalls fall: each half's share, between 0 and 1.
        for (const half of run.stallHalves!) {
          expect(half).toBeGreaterThanOrEqual(0);
          expect(half).toBeLessThan(1);
        }
      }
      for (const run of report.runs) expect(run.samples).toBe(report.dataset.samples);
      for (const row of report.summary) {
        expectRatesAgree(row, report.dataset.meanBytes);
        expect(row.waitMs.p50).toBeGreaterThan(0);
        expect(row.waitMs.p50).toBeLessThanOrEqual(row.waitMs.p99);
        expect(row.loaderCpuSecondsPerGB).toBeGreaterThan(0);
        expect(row.loaderPeakRssBytes).toBeGreaterThan(0);
        // The proxy's CPU is metered beside the loader's.
        expect(row.proxyCpuSeconds).toBeGreaterThan(0);
        expect(row.samplesPerLoaderAndProxyCpuSecond).toBeGreaterThan(0);
        // How long the stream took to come at its rate: after its first batch, within the run.
        expect(row.ramp!.secondHalfSamplesPerSecond).toBeGreaterThan(0);
        expect(row.ramp!.atRateMs).toBeGreaterThanOrEqual(row.firstBatchMs);
        // Every row has its paced trainer's waits.
        expect(row.trainer!.waitMs.p99).toBeGreaterThanOrEqual(0);
      }
      // The loader's reads in flight were sampled from its /metrics during the runs (a short
      // run may end before a scrape): at 20 ms, reads wait on the database at some scrape.
      const sampled = report.runs.filter((r) => r.readsInFlight !== undefined);
      expect(sampled.length).toBeGreaterThan(0);
      for (const r of sampled) {
        expect(r.readsInFlight!.mean).toBeLessThanOrEqual(r.readsInFlight!.max);
      }
      expect(sampled.filter((r) => r.rttMs > 0).some((r) => r.readsInFlight!.max > 0)).toBe(true);
      expect(report.ratios.unpinned?.cCongestedTrainerP99Ms).toBeGreaterThanOrEqual(0);
      expect(report.ratios.unpinned?.cHighTrainer?.rttMs).toBe(20);
      expect(report.ratios.unpinned?.cHighTrainer?.stallFraction).toBeGreaterThanOrEqual(0);
      const svg = await readFile(report.svgPath, 'utf8');
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
      expect(JSON.parse(await readFile(report.jsonPath, 'utf8'))).toMatchObject({
        toxiproxyPid: report.toxiproxyPid,
      });
      // Toxiproxy, two loaders and twelve trainer children, all gone.
      expect(report.childPids).toContain(report.toxiproxyPid);
      expectNoChildLeft(report.childPids, 15);
    },
  );
});
