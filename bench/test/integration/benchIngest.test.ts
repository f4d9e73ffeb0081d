import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveIngestBenchOptions } from '../../ingest/resolveIngestBenchOptions.js';
import { runIngestBench, type IngestBenchReport } from '../../ingest/runIngestBench.js';
import { INGEST_WAYS } from '../../ingest/runIngestWay.js';
import { defaultStateDir } from '../../../src/devdb/index.js';
import { createDbClient } from '../../../src/core/index.js';
import { testDbConfig } from '../../../test/integration/dbHelpers.js';

// A prefix of its own, so a `bench ingest` run by hand at the same time keeps its keyspaces.
const keyspacePrefix = `bench_t${randomBytes(4).toString('hex')}_`;
let outDir: string | undefined;

afterAll(async () => {
  if (outDir) await rm(outDir, { recursive: true, force: true });
});

describe('bench ingest --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here.
  it(
    'measures every way for both sources and drops its keyspaces',
    { timeout: 300_000 },
    async () => {
      outDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-ingest-'));
      const local = !process.env.SCYLLA_LOADER_CONTACT_POINTS;
      const report: IngestBenchReport = await runIngestBench(
        resolveIngestBenchOptions({
          db: testDbConfig(),
          localStateDir: local ? defaultStateDir() : undefined,
          stateRoot: path.dirname(defaultStateDir()),
          quick: true,
          keyspacePrefix,
          outDir,
        }),
      );

      expect(report.sources.map((s) => [s.source, s.samples])).toEqual([
        ['jpeg100k', 200],
        ['mnist', 1000],
      ]);
      // Every way wrote every sample (measureIngestRun throws otherwise), side by side.
      expect(report.summary.map((r) => `${r.source} ${r.way}`)).toEqual(
        ['jpeg100k', 'mnist'].flatMap((s) => INGEST_WAYS.map((w) => `${s} ${w}`)),
      );
      expect(report.runs.every((r) => r.samples === (r.source === 'mnist' ? 1000 : 200))).toBe(
        true,
      );
      for (const row of report.summary) {
        expect(row.vsWriteLoop).not.toBeNull();
        if (row.way === 'write-loop') expect(row.vsWriteLoop).toBe(1);
        expect(row.samplesPerSecond).toBeGreaterThan(0);
        expect(row.megabytesPerSecond).toBeGreaterThan(0);
        expect(row.cpuSeconds.loader).toBeGreaterThan(0);
        if (local) expect(row.cpuSeconds.database).toBeGreaterThan(0);
      }
      expect(report.coldStart).toBeNull();
      const written = JSON.parse(await readFile(report.jsonPath, 'utf8')) as IngestBenchReport;
      expect(written.runs.length).toBe(report.runs.length);

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
