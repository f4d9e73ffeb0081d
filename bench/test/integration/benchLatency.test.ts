import { readFile, rm, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveLatencyBenchOptions } from '../../latency/LatencyBenchOptions.js';
import type { LatencyBenchReport } from '../../latency/runLatencyBench.js';
import { runLatencyBench } from '../../latency/runLatencyBench.js';
import { toxiproxyBinary } from '../../latency/toxiproxyBinary.js';
import { dropBenchDataset } from '../../dataset/benchDataset.js';
import { defaultStateDir, isProcessAlive } from '../../../src/devdb/index.js';
import { createDbClient } from '../../../src/core/index.js';
import { testDbConfig, uniqueKeyspace } from '../../../test/integration/dbHelpers.js';

const dataset = uniqueKeyspace();
let outDir: string | undefined;

afterAll(async () => {
  const client = await createDbClient(testDbConfig());
  try {
    await dropBenchDataset(client, dataset);
  } finally {
    await client.shutdown();
  }
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('bench latency --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it(
    'measures B and C through toxiproxy and leaves no process behind',
    { timeout: 180_000 },
    async () => {
      outDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-latency-'));
      const report: LatencyBenchReport = await runLatencyBench(
        resolveLatencyBenchOptions({
          db: testDbConfig(),
          dbPid: undefined,
          toxiproxy: toxiproxyBinary(),
          stateRoot: path.dirname(defaultStateDir()),
          quick: true,
          dataset,
          outDir,
        }),
      );

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
      // Every row has a full-speed run and a paced-trainer run (a step of 32 / 1000 s).
      expect(report.settings.trainer).toEqual({ samplesPerSecond: 1000, stepMs: 32 });
      expect(report.runs.filter((r) => r.pace === 'trainer').length).toBe(6);
      for (const run of report.runs.filter((r) => r.pace === 'trainer')) {
        expect(run.stepMs).toBe(32);
        // A trainer paced at 1000 samples/s cannot consume faster than that.
        expect(run.samplesPerSecond).toBeLessThan(1000 * 1.05);
        expect(run.stallFraction).toBeGreaterThanOrEqual(0);
        expect(run.stallFraction).toBeLessThan(1);
      }
      for (const row of report.summary) {
        expect(row.samplesPerSecond).toBeGreaterThan(0);
        expect(row.megabytesPerSecond).toBeGreaterThan(0);
        expect(row.waitMs.p50).toBeGreaterThan(0);
        expect(row.waitMs.p99).toBeGreaterThan(0);
        expect(row.loaderCpuSecondsPerGB).toBeGreaterThan(0);
        expect(row.loaderPeakRssBytes).toBeGreaterThan(0);
        expect(row.trainer?.waitMs.p99).toBeGreaterThanOrEqual(0);
      }
      expect(report.ratios.unpinned?.cCongestedTrainerP99Ms).toBeGreaterThanOrEqual(0);
      const svg = await readFile(report.svgPath, 'utf8');
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
      expect(JSON.parse(await readFile(report.jsonPath, 'utf8'))).toMatchObject({
        toxiproxyPid: report.toxiproxyPid,
      });
      // Toxiproxy, two loaders and twelve trainer children, all gone.
      expect(report.childPids).toContain(report.toxiproxyPid);
      expect(report.childPids.length).toBe(15);
      expect(report.childPids.filter(isProcessAlive)).toEqual([]);
    },
  );
});
