import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { formatMixingReport } from '../../stream/formatMixingReport.js';
import { resolveStreamBenchOptions } from '../../stream/resolveStreamBenchOptions.js';
import type { StreamBenchReport } from '../../stream/runStreamBench.js';
import { testDbConfig } from '../../../test/support/index.js';
import { benchHarness, expectNoChildLeft } from './benchHarness.js';

const bench = benchHarness('mixing');

describe('bench stream --sources', () => {
  it('takes 2 to 8 weights above 0', () => {
    const base = { db: testDbConfig(), dbPid: undefined, stateRoot: os.tmpdir(), quick: true };
    const weights = (sources: string) => resolveStreamBenchOptions({ ...base, sources }).mixWeights;
    expect(weights('5,3,2')).toEqual([5, 3, 2]);
    expect(weights('0.5, 1')).toEqual([0.5, 1]);
    expect(resolveStreamBenchOptions(base).mixWeights).toBeUndefined();
    for (const bad of ['5', '1,2,3,4,5,6,7,8,9', '5,0', '5,x', '5,,2', '5,-1']) {
      expect(() => weights(bad), bad).toThrow(/--sources/);
    }
  });
});

describe('bench stream --quick --sources 5,3,2', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it(
    'streams the mixture as many samples as the single source, run for run',
    { timeout: 240_000 },
    async () => {
      const { report } = await bench.run<StreamBenchReport>('stream', ['--sources', '5,3,2']);

      const mix = report.settings.mix!;
      expect(mix.name).toBe('mix5_3_2');
      expect(mix.created).toBe(true);
      expect(mix.sources.map((s) => [s.split, s.weight])).toEqual([
        ['mix5_3_2/p0', 5],
        ['mix5_3_2/p1', 3],
        ['mix5_3_2/p2', 2],
      ]);
      // The parts hold every sample of the dataset once.
      expect(mix.sources.reduce((sum, s) => sum + s.size, 0)).toBe(300);

      expect(report.summary.map((r) => r.scenario).sort()).toEqual([
        'service',
        'service-in-order-p2',
        'service-mixed',
        'tight-loop',
      ]);
      const timed = report.runs.filter((r) => r.phase === 'timed');
      const single = timed.filter((r) => r.scenario === 'service');
      const mixed = timed.filter((r) => r.scenario === 'service-mixed');
      expect(mixed.map((r) => r.run)).toEqual(single.map((r) => r.run));
      for (const r of mixed) {
        expect(r.samples).toBe(300);
        expect(r.samples).toBe(single.find((s) => s.run === r.run)!.samples);
        // Quotas by weight: 150, 90 and 60 of the 300 positions.
        expect(r.sourceSamples).toEqual([150, 90, 60]);
        expect(r.cpuSeconds.loader).toBeGreaterThan(0);
      }

      const [row] = report.mixing!;
      expect(row!.placement).toBe('unpinned');
      // The ratio is of the mixed rate to the single source's, round by round.
      expect(row!.ratio).toBeGreaterThan(0);
      expect(row!.ratio).toBeLessThan(10);
      expect(row!.roundRatios).toHaveLength(1);
      expect(row!.single.loaderCpuSecondsPer1000Samples).toBeGreaterThan(0);
      expect(row!.mixed.loaderCpuSecondsPer1000Samples).toBeGreaterThan(0);
      expect(row!.mixed.sourceSamples).toEqual([150, 90, 60]);

      // The loader's end lines of the mixed streams (warm-up and measured) count per source.
      const mixedEnds = report.loaderStreamEnds.unpinned!.filter((e) => e['sources']);
      expect(mixedEnds).toHaveLength(2);
      for (const end of mixedEnds) {
        const sources = end['sources'] as { split: string; samples: number }[];
        expect(sources.map((s) => s.split)).toEqual(mix.sources.map((s) => s.split));
        expect(sources.map((s) => s.samples)).toEqual([150, 90, 60]);
      }

      const table = formatMixingReport(report);
      expect(table).toContain('| unpinned | mixed (5:3:2) |');
      expect(table).toContain('| unpinned | single source (split all) |');
      // Two SDK clients, one in order, the tight loop and the loader.
      expectNoChildLeft(report.childPids, 5);
    },
  );
});
