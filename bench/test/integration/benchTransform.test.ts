import { describe, expect, it } from 'vitest';
import type { TransformBenchReport } from '../../transform/runTransformBench.js';
import { TRANSFORM_LEG_NAMES } from '../../transform/transformLegs.js';
import { benchHarness } from './benchHarness.js';

const bench = benchHarness('transform');

describe('bench transform --quick', () => {
  // Figures only: the goals are printed, never asserted here.
  it(
    'runs every leg through the CLI and prints a row of positive figures for each',
    { timeout: 600_000 },
    async () => {
      const result = await bench.run<TransformBenchReport>('transform', [], {
        outDir: false,
        dbEnv: true,
      });

      const rows = result.stdout
        .split('\n')
        .filter((l) => l.startsWith('| ') && !l.startsWith('| leg'))
        .map((l) =>
          l
            .split('|')
            .slice(1, -1)
            .map((c) => c.trim()),
        );
      expect(rows.map((r) => r[0]!.split(' ')[0])).toEqual([...TRANSFORM_LEG_NAMES]);
      for (const cells of rows) {
        // images/s, CPU ms/image total, loader, Python, images per CPU s, kB/image; the
        // database's is n/a (no pid of a node the bench did not start).
        for (const i of [1, 2, 3, 4, 6, 7]) {
          expect(Number.parseFloat(cells[i]!), `${cells[0]} column ${i}`).toBeGreaterThan(0);
        }
      }
      expect(result.stdout).toMatch(/Python PIL: \d+\.\d\dx \(goal >= 2x: (met|not met)\)/);
      expect(result.stdout).toMatch(/Python v2: \d+\.\d\dx/);
      expect(result.stdout).toMatch(/at 150 ms \/ at 0 ms \(both via toxiproxy\): \d+\.\d\d /);
      expect(result.stdout).toMatch(/raw \/ JPEG q90: \d+\.\d\dx/);
      expect(result.stdout).toMatch(
        /per image alone .*: \d+\.\d\dx \(goal <= 1.3x: (met|not met)\)/,
      );

      expect(result.stdout).toMatch(
        /stored bytes, 2 DataLoader workers \(dataset-bytes, issue 41\): \d+\.\d{3} ms \(goal <= 0.3 ms: (met|not met)\)/,
      );
      expect(result.stdout).toMatch(
        /raw tensors, num_workers=0 \(dataset-raw-main, issue 41\): \d+\.\d{3} ms/,
      );

      const { report } = result;
      expect(report.runs).toHaveLength(TRANSFORM_LEG_NAMES.length);
      for (const run of report.runs) {
        // Every image of the epoch arrived, none lost or skipped.
        expect(run.images).toBe(300);
        // Uint8 NCHW tensors of 3 x 224 x 224, at most a batch (64) each; the DataLoader's
        // workers each stream half, so its last batch is smaller than the server's.
        if (run.leg !== 'server-jpeg') {
          // The stored-bytes leg's items are lists of bytes: its shape is the list's length.
          const shape = run.leg.startsWith('dataset-bytes') ? [] : [3, 224, 224];
          expect(run.lastShape.slice(1)).toEqual(shape);
          expect(run.lastShape[0]).toBeGreaterThan(0);
          expect(run.lastShape[0]).toBeLessThanOrEqual(64);
        }
      }
      // RAW is 224 * 224 * 3 bytes an image plus ids and tokens; JPEG much less.
      const bytes = (leg: string): number =>
        report.summary.find((s) => s.leg === leg)!.wireBytesPerImage;
      expect(bytes('server-raw')).toBeGreaterThanOrEqual(224 * 224 * 3);
      expect(bytes('server-raw')).toBeLessThan(224 * 224 * 3 + 200);
      expect(bytes('server-jpeg')).toBeLessThan(bytes('server-raw') / 2);
    },
  );
});
