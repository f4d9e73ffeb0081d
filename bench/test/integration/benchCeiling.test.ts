import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  CEILING_SCENARIOS,
  runCeilingBench,
  type CeilingBenchReport,
} from '../../ceiling/runCeilingBench.js';
import { testDbConfig } from '../../../test/support/index.js';
import { benchHarness, expectNoChildLeft } from './benchHarness.js';

const bench = benchHarness('ceiling');

describe('bench ceiling --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here. In process, so
  // that every child it spawns is counted.
  it('measures every leg and leaves no process behind', { timeout: 120_000 }, async () => {
    const pids: number[] = [];
    const report: CeilingBenchReport = await runCeilingBench({
      db: testDbConfig(),
      quick: true,
      outDir: await bench.outDir(),
      onSpawn: (pid) => pids.push(pid),
    });

    expect(report.summary.map((r) => r.scenario).sort()).toEqual([...CEILING_SCENARIOS].sort());
    expect(report.runs).toHaveLength(CEILING_SCENARIOS.length);
    // Every leg carried the same batch: 128 samples of 100 kB, plus ids and framing (< 1%).
    const batchBytes = 128 * 100_000;
    // gRPC counts sample bytes only, exactly the batch; a quotient of rates may land an ulp under.
    const isBatch = (bytes: number): boolean =>
      bytes >= batchBytes * (1 - 1e-9) && bytes < batchBytes * 1.01;
    for (const run of report.runs) {
      expect(run.batches).toBeGreaterThan(0);
      expect(isBatch(run.bytes / run.batches), `${run.scenario}: ${run.bytes / run.batches}`).toBe(
        true,
      );
    }
    const raw = report.summary.find((r) => r.scenario === 'raw-http2')!;
    expect(raw.ratioToRawHttp2).toBeCloseTo(1, 6);
    for (const row of report.summary) {
      // A row's figures are medians of its scenario's runs (each taken on its own, so their
      // ratio need not be one run's batch size): each lies within its runs' range.
      const runs = report.runs.filter((r) => r.scenario === row.scenario);
      const within = (value: number, of: (r: (typeof runs)[number]) => number): boolean =>
        value >= Math.min(...runs.map(of)) && value <= Math.max(...runs.map(of));
      expect(within(row.gigabytesPerSecond, (r) => r.gigabytesPerSecond)).toBe(true);
      expect(within(row.batchesPerSecond, (r) => r.batchesPerSecond)).toBe(true);
      expect(row.cpuSecondsPerGigabyte.server).toBeGreaterThan(0);
      expect(row.cpuSecondsPerGigabyte.client).toBeGreaterThan(0);
      expect(row.ratioToRawHttp2).toBeCloseTo(row.gigabytesPerSecond / raw.gigabytesPerSecond, 6);
    }
    const written = JSON.parse(await readFile(report.jsonPath, 'utf8')) as CeilingBenchReport;
    expect(written.summary).toEqual(report.summary);
    // Two children per run (server and client), all of them gone.
    expectNoChildLeft(pids, 2 * CEILING_SCENARIOS.length);
  });
});
