import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropBenchDataset } from '../../dataset/benchDataset.js';
import { resolveStreamBenchOptions } from '../../stream/resolveStreamBenchOptions.js';
import { runStreamBench } from '../../stream/runStreamBench.js';
import type { StreamBenchReport } from '../../stream/runStreamBench.js';
import { defaultStateDir, isProcessAlive, localClusterStatus } from '../../../src/devdb/index.js';
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

describe('bench stream --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it('measures every scenario and leaves no process behind', { timeout: 180_000 }, async () => {
    outDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-stream-'));
    const local = process.env.SCYLLA_LOADER_CONTACT_POINTS
      ? undefined
      : (await localClusterStatus(defaultStateDir())).nodes;
    const dbPid = local?.length === 1 ? (local[0]!.pid ?? undefined) : undefined;
    const report: StreamBenchReport = await runStreamBench(
      resolveStreamBenchOptions({
        db: testDbConfig(),
        dbPid,
        stateRoot: path.dirname(defaultStateDir()),
        quick: true,
        dataset,
        outDir,
        groupReads: 8,
      }),
    );

    expect(report.dataset.samples).toBe(300);
    expect(report.dataset.meanBytes).toBeGreaterThan(0);
    expect(report.summary.map((r) => r.scenario).sort()).toEqual([
      'service',
      'service-grouped',
      'service-in-order-p2',
      'tight-loop',
      'tight-loop-grouped',
    ]);
    for (const row of report.summary) {
      expect(row.samplesPerSecond).toBeGreaterThan(0);
      expect(row.megabytesPerSecond).toBeGreaterThan(0);
      expect(row.cpuSeconds.client).toBeGreaterThan(0);
      if (dbPid !== undefined) expect(row.cpuSeconds.db).toBeGreaterThan(0);
      expect(row.readerCpu?.microsPerSample).toBeGreaterThan(0);
      if (!row.scenario.startsWith('tight-loop')) {
        expect(row.cpuSeconds.loader).toBeGreaterThan(0);
        expect(row.loaderCpuSecondsPerGB).toBeGreaterThan(0);
        expect(row.waitMs?.p99).toBeGreaterThan(0);
      }
    }
    for (const layout of report.layout.results) {
      expect(layout.encodeMs).toBeGreaterThan(0);
      expect(layout.decodeMs).toBeGreaterThan(0);
    }
    // Two tight loops (single-row, grouped), two serves (grouping off, on), three SDK clients.
    expect(report.childPids.length).toBe(7);
    // The grouped loader did group, the other did not.
    const grouping = report.loaderStreamEnds.unpinned!.map((e) => e['groupReads']);
    expect(grouping).toContain(8);
    expect(grouping).toContain(1);
    expect(report.childPids.filter(isProcessAlive)).toEqual([]);
  });
});
