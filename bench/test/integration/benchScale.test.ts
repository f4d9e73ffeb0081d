import type cassandra from 'cassandra-driver';
import { describe, expect, it } from 'vitest';
import type { ScaleBenchReport } from '../../scale/runScaleBench.js';
import { scaleSampleBytes } from '../../scale/scaleSample.js';
import {
  createDbClient,
  datasetNamespace,
  readDatasetInfo,
  sampleId,
} from '../../../src/core/index.js';
import { testDbConfig } from '../../../test/support/index.js';
import { benchHarness, expectNoChildLeft } from './benchHarness.js';

const bench = benchHarness('scale');
const dataset = bench.dataset;

describe('bench scale --quick', () => {
  // Figures only: memory and speed are measured by the benchmark, never asserted here. That
  // every split streamed exactly its samples is.
  it(
    'streams splits of 1,000 and 10,000 samples in full and reports each',
    { timeout: 150_000 },
    async () => {
      const db = testDbConfig();
      const { report, stdout } = await bench.run<ScaleBenchReport>('scale', [], { dbEnv: true });
      expect(stdout).toMatch(/^\| split samples \| loader peak RSS MiB \|/m);
      expect(stdout).toMatch(/^\| 1,000 \| /m);
      expect(stdout).toMatch(/^\| 10,000 \| /m);

      expect(report.environment.cores).toBeGreaterThan(0);
      expect(report.settings).toMatchObject({
        sizes: [1000, 10_000],
        runs: 1,
        batchSize: 256,
        sampleBytes: 100,
      });
      expect(report.dataset).toMatchObject({ name: dataset, samples: 10_000, classes: 10 });
      expect(report.dataset.totalBytes).toBe(1_000_000);
      expect(report.splits.map((s) => [s.cap, s.size])).toEqual([
        [1000, 1000],
        [10_000, 10_000],
      ]);
      expect(report.runs).toHaveLength(2);
      for (const run of report.runs) {
        expect(run.splitSamples).toBe(run.size);
        expect(run.samples).toBe(run.size);
        expect(run.loaderSamples).toBe(run.size);
        expect(run.bytes).toBe(run.size * 100);
        expect(run.batches).toBe(Math.ceil(run.size / 256));
        expect(run.firstBatchMs).toBeGreaterThan(0);
      }
      expect(report.summary.map((r) => r.size)).toEqual([1000, 10_000]);
      for (const row of report.summary) {
        expect(row.samplesPerSecond).toBeGreaterThan(0);
        if (process.platform === 'linux') {
          expect(row.loaderPeakRssMiB).toBeGreaterThan(0);
          expect(row.loaderCpuMsPerBatch).toBeGreaterThan(0);
        }
      }
      if (process.platform === 'linux') {
        expect(report.rss).toMatchObject({ smallest: 1000, largest: 10_000, target: 1.1 });
      }
      // A fresh loader and one trainer per run.
      expectNoChildLeft(report.childPids, 4);

      // The samples went in through the real ingest with their bytes in memory: the rows are
      // what an ingest writes (ids from the source key, label, size, the bytes themselves).
      const client = await createDbClient(db);
      try {
        const info = await readDatasetInfo(client, dataset);
        expect(info.sampleCount).toBe(10_000);
        expect(info.classCounts.get(3)).toBe(1000);
        const ns = datasetNamespace(dataset);
        for (const index of [0, 4_321, 9_999]) {
          const key = `s${String(index).padStart(7, '0')}`;
          const id = sampleId(key, ns);
          const sample = (
            await client.execute(`SELECT label, data FROM ${dataset}.samples WHERE id = ?`, [id], {
              prepare: true,
            })
          ).first() as cassandra.types.Row;
          expect(sample['label']).toBe(index % 10);
          expect(Buffer.compare(sample['data'] as Buffer, scaleSampleBytes(index))).toBe(0);
          const meta = (
            await client.execute(
              `SELECT source_key, size_bytes FROM ${dataset}.metadata WHERE id = ?`,
              [id],
              { prepare: true },
            )
          ).first() as cassandra.types.Row;
          expect(meta['source_key']).toBe(key);
          expect(meta['size_bytes']).toBe(100);
        }
      } finally {
        await client.shutdown();
      }
    },
  );
});
