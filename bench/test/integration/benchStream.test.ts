import { describe, expect, it } from 'vitest';
import type { StreamBenchReport } from '../../stream/runStreamBench.js';
import { benchHarness, expectNoChildLeft, expectRatesAgree } from './benchHarness.js';

const bench = benchHarness('stream');

describe('bench stream --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it('measures every scenario and leaves no process behind', { timeout: 180_000 }, async () => {
    const { report, stdout } = await bench.run<StreamBenchReport>('stream', ['--group-reads', '8']);

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
    // Two tight loops (single-row, grouped), two serves (grouping off, on), three SDK clients.
    expectNoChildLeft(report.childPids, 7);
  });
});
