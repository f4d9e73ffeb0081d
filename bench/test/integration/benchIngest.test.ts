import { describe, expect, it } from 'vitest';
import type { IngestBenchReport } from '../../ingest/runIngestBench.js';
import { INGEST_WAYS } from '../../ingest/runIngestWay.js';
import { createDbClient } from '../../../src/core/index.js';
import { testDbConfig } from '../../../test/support/index.js';
import { benchHarness, expectRatesAgree } from './benchHarness.js';

const bench = benchHarness('ingest');

describe('bench ingest --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it(
    'measures every way for both sources and drops its keyspaces',
    { timeout: 300_000 },
    async () => {
      // A prefix of its own, so a `bench ingest` run by hand at the same time keeps its keyspaces.
      const keyspacePrefix = `bench_${bench.dataset}_`;
      const { report } = await bench.run<IngestBenchReport>(
        'ingest',
        ['--keyspace-prefix', keyspacePrefix],
        { dataset: false },
      );

      expect(report.sources.map((s) => [s.source, s.samples])).toEqual([
        ['jpeg100k', 200],
        ['mnist', 1000],
      ]);
      // Every way wrote every sample (measureIngestRun throws otherwise), side by side.
      expect(report.summary.map((r) => `${r.source} ${r.way}`)).toEqual(
        ['jpeg100k', 'mnist'].flatMap((s) => INGEST_WAYS.map((w) => `${s} ${w}`)),
      );
      const samples = (source: string): number => (source === 'mnist' ? 1000 : 200);
      for (const run of report.runs) {
        expect(run.samples).toBe(samples(run.source));
        // Each way wrote the same bytes of its source.
        expect(run.bytes).toBe(report.sources.find((s) => s.source === run.source)!.bytes);
      }
      const local = !process.env.SCYLLA_LOADER_CONTACT_POINTS;
      for (const row of report.summary) {
        const source = report.sources.find((s) => s.source === row.source)!;
        expectRatesAgree(row, source.meanBytes);
        // The write loop is the base each way is compared with.
        const base = report.summary.find((r) => r.source === row.source && r.way === 'write-loop');
        expect(row.vsWriteLoop).toBeCloseTo(row.samplesPerSecond / base!.samplesPerSecond, 6);
        expect(row.cpuSeconds.loader).toBeGreaterThan(0);
        if (local) expect(row.cpuSeconds.database).toBeGreaterThan(0);
      }
      expect(report.coldStart).toBeNull();

      expect(report.keyspaces.every((k) => k.startsWith(keyspacePrefix))).toBe(true);
      const client = await createDbClient(testDbConfig());
      try {
        const rs = await client.execute('SELECT keyspace_name FROM system_schema.keyspaces');
        const left = rs.rows
          .map((r) => String(r['keyspace_name']))
          .filter((k) => k.startsWith(keyspacePrefix));
        expect(left).toEqual([]);
      } finally {
        await client.shutdown();
      }
    },
  );
});
