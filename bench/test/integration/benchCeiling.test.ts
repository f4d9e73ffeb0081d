import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  CEILING_SCENARIOS,
  runCeilingBench,
  type CeilingBenchReport,
} from '../../ceiling/runCeilingBench.js';
import { isProcessAlive } from '../../../src/devdb/index.js';
import { testDbConfig } from '../../../test/integration/dbHelpers.js';

let outDir: string | undefined;

afterAll(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('bench ceiling --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it('measures every leg and leaves no process behind', { timeout: 120_000 }, async () => {
    outDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-ceiling-'));
    const pids: number[] = [];
    const report: CeilingBenchReport = await runCeilingBench({
      db: testDbConfig(),
      quick: true,
      outDir,
      onSpawn: (pid) => pids.push(pid),
    });

    expect(report.summary.map((r) => r.scenario).sort()).toEqual([...CEILING_SCENARIOS].sort());
    expect(report.runs).toHaveLength(CEILING_SCENARIOS.length);
    for (const run of report.runs) {
      expect(run.bytes).toBeGreaterThan(0);
      expect(run.batches).toBeGreaterThan(0);
    }
    for (const row of report.summary) {
      expect(row.gigabytesPerSecond).toBeGreaterThan(0);
      expect(row.batchesPerSecond).toBeGreaterThan(0);
      expect(row.cpuSecondsPerGigabyte.server).toBeGreaterThan(0);
      expect(row.cpuSecondsPerGigabyte.client).toBeGreaterThan(0);
      expect(row.ratioToRawHttp2).toBeGreaterThan(0);
    }
    const written = JSON.parse(await readFile(report.jsonPath, 'utf8')) as CeilingBenchReport;
    expect(written.summary).toHaveLength(CEILING_SCENARIOS.length);

    // Two children per run (server and client), all of them gone.
    expect(pids).toHaveLength(2 * CEILING_SCENARIOS.length);
    for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
  });
});
