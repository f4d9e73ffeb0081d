import { describe, expect, it } from 'vitest';
import type { CoresBenchReport } from '../../cores/runCoresBench.js';
import { benchHarness } from './benchHarness.js';

const bench = benchHarness('cores');

describe('bench cores --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here. The spread of the
  // streams over the workers, their processes' CPU and exactly-once are.
  it(
    'runs 1 and 2 workers under 4 ranks: both workers serve, every sample once, CPU of all processes',
    { timeout: 180_000 },
    async () => {
      const { report, stdout } = await bench.run<CoresBenchReport>('cores');
      expect(stdout).toMatch(/^\| workers \| samples\/s \| MB\/s \|/m);
      expect(stdout).toMatch(/^\| 1 \| .* \| yes \|$/m);
      expect(stdout).toMatch(/^\| 2 \| .* \| yes \|$/m);
      expect(report.summary.map((r) => r.workers)).toEqual([1, 2]);
      const [one, two] = [1, 2].map((w) => report.runs.find((r) => r.workers === w)!);
      expect(one!.workerRssBytes).toHaveLength(1);
      expect(one!.primaryRssBytes).toBeUndefined();
      expect(two!.workerRssBytes).toHaveLength(2);
      expect(two!.primaryRssBytes).toBeGreaterThan(0);
      // Four connections over two workers, both serving. Not always two each: the primary's
      // round robin skips a worker that has not yet taken its previous connection, which on
      // a loaded machine (the Python suite beside this file) gave [3, 1].
      expect(two!.streamsPerWorker).toHaveLength(2);
      expect(two!.streamsPerWorker.reduce((a, b) => a + b, 0)).toBe(4);
      expect(Math.min(...two!.streamsPerWorker)).toBeGreaterThanOrEqual(1);
      for (const r of report.runs) {
        expect(r.exactlyOnce.ok).toBe(true);
        expect(r.samples).toBe(300);
        expect(r.cpuSeconds.loader).toBeGreaterThan(0);
        for (const rss of r.workerRssBytes) expect(rss).toBeGreaterThan(0);
      }
      // Scaling is against one worker.
      expect(report.summary[0]!.scaling).toBeCloseTo(1, 6);
    },
  );
});
