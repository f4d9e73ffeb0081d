import { describe, expect, it } from 'vitest';
import type { ConcurrencyBenchReport } from '../../concurrency/runConcurrencyBench.js';
import {
  benchHarness,
  expectDocsWritten,
  expectNoChildLeft,
  expectRatesAgree,
} from './benchHarness.js';

const bench = benchHarness('concurrency');

describe('bench concurrency --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here. Exactly-once is.
  it(
    'streams 1 and 4 ranks, every sample exactly once per epoch, no process left',
    { timeout: 120_000 },
    async () => {
      // --docs writes the table between the page's markers and leaves the rest as it was.
      const result = await bench.run<ConcurrencyBenchReport>('concurrency', [], {
        docs: 'concurrency',
      });
      const { report } = result;
      expect(result.stdout).toMatch(/^\| streams \| samples\/s \| MB\/s \|/m);
      expect(result.stdout).toMatch(/^\| 1 \| .* \| yes \|$/m);
      expect(result.stdout).toMatch(/^\| 4 \| .* \| yes \|$/m);
      expect(report.dataset.samples).toBe(300);
      expect(report.environment.cores).toBeGreaterThan(0);
      expect(report.settings).toMatchObject({ streams: [1, 4], runs: 1, batchSize: 32 });
      const epochs = report.settings.epochs;
      expect(report.summary.map((r) => r.streams)).toEqual([1, 4]);
      expect(report.scalingBase).toBe(1);
      expect(report.summary[0]!.scaling).toBe(1);
      for (const row of report.summary) {
        expect(row.exactlyOnce).toBe(true);
        expectRatesAgree(row, report.dataset.meanBytes);
        expect(row.perStreamSamplesPerSecond.min).toBeGreaterThan(0);
        expect(row.waitMs.p50).toBeLessThanOrEqual(row.waitMs.p99);
        expect(row.cpuSeconds.loader).toBeGreaterThan(0);
        expect(row.cpuSeconds.client).toBeGreaterThan(0);
        expect(row.loaderCpuSecondsPerGB).toBeGreaterThan(0);
        expect(row.loaderPeakRssBytes).toBeGreaterThan(0);
      }
      // The ranks of every run together got each sample once per epoch: nothing twice, none
      // missing, none foreign.
      expect(report.runs.map((r) => r.streams).sort()).toEqual([1, 4]);
      for (const run of report.runs) {
        expect(run.perStreamSamplesPerSecond.length).toBe(run.streams);
        expect(run.samples).toBe(300 * epochs);
        expect(run.exactlyOnce).toEqual({
          expected: 300 * epochs,
          delivered: 300 * epochs,
          duplicates: 0,
          missing: 0,
          unexpected: 0,
          ok: true,
        });
      }
      // One loader and one client child per run, all gone.
      expect(report.childPids).toContain(report.servePid);
      expectNoChildLeft(report.childPids, 3);
      expectDocsWritten(result.page, 'concurrency', 'concurrency', [
        /^\| streams \| samples\/s \| MB\/s \|/m,
        /^\| 4 \| .* \| yes \|$/m,
      ]);
    },
  );
});
