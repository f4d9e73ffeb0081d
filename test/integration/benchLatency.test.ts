import { readFile, rm, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveLatencyBenchOptions } from '../../src/bench/latency/LatencyBenchOptions.js';
import type { LatencyBenchReport } from '../../src/bench/latency/LatencyBenchReport.js';
import { runLatencyBench } from '../../src/bench/latency/runLatencyBench.js';
import { toxiproxyBinary } from '../../src/bench/latency/toxiproxyBinary.js';
import { dropStreamDataset } from '../../src/bench/stream/prepareStreamDataset.js';
import { defaultStateDir } from '../../src/devdb/defaultStateDir.js';
import { isProcessAlive } from '../../src/devdb/processAlive.js';
import { createDbClient } from '../../src/server/db/createDbClient.js';
import { testDbConfig, uniqueKeyspace } from './dbHelpers.js';

const dataset = uniqueKeyspace();
let outDir: string | undefined;

afterAll(async () => {
  const client = await createDbClient(testDbConfig());
  try {
    await dropStreamDataset(client, dataset);
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
      expect(report.summary.map((r) => `${r.scenario} ${r.routes} ${r.rttMs}`).sort()).toEqual([
        'B main 0',
        'B main 20',
        'B main+congested 20',
        'C main 0',
        'C main 20',
        'C main+congested 20',
      ]);
      for (const row of report.summary) {
        expect(row.samplesPerSecond).toBeGreaterThan(0);
        expect(row.megabytesPerSecond).toBeGreaterThan(0);
        expect(row.waitMs.p50).toBeGreaterThan(0);
        expect(row.waitMs.p99).toBeGreaterThan(0);
        expect(row.loaderCpuSecondsPerGB).toBeGreaterThan(0);
        expect(row.loaderPeakRssBytes).toBeGreaterThan(0);
      }
      const svg = await readFile(report.svgPath, 'utf8');
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
      expect(JSON.parse(await readFile(report.jsonPath, 'utf8'))).toMatchObject({
        toxiproxyPid: report.toxiproxyPid,
      });
      // Toxiproxy, two loaders and six trainer children, all gone.
      expect(report.childPids).toContain(report.toxiproxyPid);
      expect(report.childPids.length).toBe(9);
      expect(report.childPids.filter(isProcessAlive)).toEqual([]);
    },
  );
});
