import { describe, expect, it } from 'vitest';
import type { StreamBenchReport } from '../../stream/runStreamBench.js';
import { createDbClient } from '../../../src/core/index.js';
import { testDbConfig } from '../../../test/support/index.js';
import {
  benchHarness,
  expectDocsWritten,
  expectNoChildLeft,
  expectRatesAgree,
} from './benchHarness.js';

const bench = benchHarness('stream');

describe('bench stream --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it('measures every scenario and leaves no process behind', { timeout: 180_000 }, async () => {
    const { report, stdout, page } = await bench.run<StreamBenchReport>(
      'stream',
      ['--group-reads', '8', '--ledger'],
      { docs: 'ledger-imagenet' },
    );

    expect(report.dataset.samples).toBe(300);
    expect(report.dataset.totalBytes).toBe(report.dataset.meanBytes * 300);
    expect(report.summary.map((r) => r.scenario).sort()).toEqual([
      'service',
      'service-grouped',
      'service-in-order-p2',
      'tight-loop',
      'tight-loop-grouped',
    ]);
    // Every timed run delivered the whole epoch, each sample once.
    for (const run of report.runs.filter((r) => r.phase === 'timed')) {
      expect(run.samples).toBe(300);
      expect(run.bytes).toBe(report.dataset.totalBytes);
    }
    // The bench started (or reused) the local node, so the database's CPU is measured too.
    const withDb = report.summary.every((r) => r.cpuSeconds.db !== undefined);
    for (const row of report.summary) {
      expectRatesAgree(row, report.dataset.meanBytes);
      expect(row.readerCpu?.microsPerSample).toBeGreaterThan(0);
      expect(row.cpuSeconds.client).toBeGreaterThan(0);
      if (withDb) expect(row.cpuSeconds.db).toBeGreaterThan(0);
      if (!row.scenario.startsWith('tight-loop')) {
        // Loader CPU per GB is its CPU over the gigabytes it sent.
        expect(row.cpuSeconds.loader).toBeGreaterThan(0);
        expect(row.loaderCpuSecondsPerGB).toBeGreaterThan(0);
        expect(row.waitMs!.p50).toBeLessThanOrEqual(row.waitMs!.p99);
      }
    }
    // The printed table has a row per scenario.
    expect(stdout.match(/^\| unpinned \| (tight loop|service)/gm)).toHaveLength(
      report.summary.length,
    );
    for (const layout of report.layout.results) {
      expect(layout.encodeMs).toBeGreaterThan(0);
      expect(layout.decodeMs).toBeGreaterThan(0);
    }
    // The grouped loader did group, the other did not.
    const grouping = report.loaderStreamEnds.unpinned!.map((e) => e['groupReads']);
    expect(grouping).toContain(8);
    expect(grouping).toContain(1);
    await expectLedgerLeg(report, stdout, page);
    // Two tight loops (single-row, grouped), two serves (grouping off, on), four SDK clients.
    expectNoChildLeft(report.childPids, 8);
  });
});

/**
 * `--ledger`: the job stream ran beside the plain one, named its own job, and the ledger held
 * exactly what it (and its warm-up) received; its figures are in the report, the printed table
 * and the docs table; its keyspace is gone after.
 */
async function expectLedgerLeg(
  report: StreamBenchReport,
  stdout: string,
  page: string | undefined,
): Promise<void> {
  const ledger = report.ledger!;
  expect(ledger.keyspace).toBe(`${bench.dataset}_ledger`);
  const jobRuns = report.runs.filter((r) => r.scenario === 'service-ledger');
  expect(jobRuns).toHaveLength(1);
  expect(jobRuns[0]!.jobId).toMatch(/^bench-[0-9a-z]+-unpinned-0$/);
  expect(jobRuns[0]!.warmupSamples).toBe(300);

  const [row] = ledger.rows;
  expect(row!.placement).toBe('unpinned');
  expect(row!.goal).toBe(0.95);
  expect(row!.roundRatios).toHaveLength(1);
  // The ratio is the job stream's rate over the plain stream's of the same round.
  const single = report.runs.find((r) => r.scenario === 'service' && r.phase === 'timed')!;
  expect(row!.ratio).toBeCloseTo(jobRuns[0]!.samplesPerSecond / single.samplesPerSecond, 9);
  expect(row!.ratio).toBeGreaterThan(0);
  expect(row!.minRatio).toBe(row!.ratio);
  expect(row!.maxRatio).toBe(row!.ratio);
  expect(row!.job.loaderCpuSecondsPer1000Samples).toBeGreaterThan(0);

  // One sample row per sample received (300 measured, 300 in the client's warm-up, 300 in the
  // loader's, which made the tables before any round), a batch row per batch of 128 (3 per
  // stream), a row per job.
  const { size } = ledger;
  expect(size.samples).toBe(900);
  expect(size.tables.appearances.rows).toBe(900);
  expect(size.tables.batches.rows).toBe(9);
  expect(size.tables.jobs.rows).toBe(3);
  // Each sample row holds at least the sample's 16-byte id; each batch row its 16-byte ids.
  expect(size.logicalBytesPerSample.appearances).toBeGreaterThan(16);
  expect(size.logicalBytesPerSample.batches).toBeGreaterThan(16);
  expect(size.logicalBytesPerSample.total).toBeGreaterThan(32);
  // The bench used the local node (no contact points given), so it measured the disk too.
  const onDisk = report.summary.every((r) => r.cpuSeconds.db !== undefined);
  if (onDisk) {
    expect(size.diskNote).toBeUndefined();
    expect(size.diskBytesPerSample!.total).toBeGreaterThan(16);
    expect(size.tables.appearances.diskBytes).toBeGreaterThan(0);
  } else {
    expect(size.diskNote).toMatch(/not measured/);
  }

  expect(stdout).toMatch(/^\| unpinned \| job named \| [\d,]+ \| \d+\.\d\d \(/m);
  expect(stdout).toMatch(/^\| appearances \| 900 \|/m);
  expectDocsWritten(page, 'ledger-imagenet', 'stream', [
    /^\| unpinned \| no job \|/m,
    /^\| total \| - \|/m,
  ]);

  const client = await createDbClient(testDbConfig());
  try {
    const rs = await client.execute(
      'SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?',
      [ledger.keyspace],
      { prepare: true },
    );
    expect(rs.rowLength).toBe(0);
  } finally {
    await client.shutdown();
  }
}
