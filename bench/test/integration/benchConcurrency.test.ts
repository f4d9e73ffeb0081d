import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ConcurrencyBenchReport } from '../../concurrency/runConcurrencyBench.js';
import { dropBenchDataset } from '../../dataset/benchDataset.js';
import { isProcessAlive } from '../../../src/devdb/index.js';
import { createDbClient } from '../../../src/core/index.js';
import { runCli } from '../../../test/support/runCli.js';
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

describe('bench concurrency --quick', () => {
  // Figures only: speed is measured by the benchmark, never asserted here. Exactly-once is.
  it(
    'streams 1 and 4 ranks, every sample exactly once per epoch, no process left',
    { timeout: 120_000 },
    async () => {
      outDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-concurrency-'));
      // --docs writes the table between the page's markers and leaves the rest as it was.
      const page = path.join(outDir, 'performance.md');
      const before = '# Performance\n\n<!-- bench:concurrency:begin -->\nold\n';
      const after = '<!-- bench:concurrency:end -->\n\nThe rest.\n';
      await writeFile(page, before + after);
      // The CLI inherits the environment: the cluster of SCYLLA_LOADER_CONTACT_POINTS, or the
      // shared local node the global setup started.
      const result = await runCli([
        'bench',
        'concurrency',
        '--quick',
        '--dataset',
        dataset,
        '--out-dir',
        outDir,
        '--docs',
        page,
      ]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^\| streams \| samples\/s \| MB\/s \|/m);
      expect(result.stdout).toMatch(/^\| 1 \| .* \| yes \|$/m);
      expect(result.stdout).toMatch(/^\| 4 \| .* \| yes \|$/m);
      const jsonPath = /^figures: (.+)$/m.exec(result.stdout)?.[1];
      expect(jsonPath?.startsWith(outDir)).toBe(true);
      const report = JSON.parse(await readFile(jsonPath!, 'utf8')) as ConcurrencyBenchReport;

      expect(report.dataset.samples).toBe(300);
      expect(report.environment.cores).toBeGreaterThan(0);
      expect(report.settings).toMatchObject({ streams: [1, 4], runs: 1, batchSize: 32 });
      const epochs = report.settings.epochs;
      expect(report.summary.map((r) => r.streams)).toEqual([1, 4]);
      expect(report.scalingBase).toBe(1);
      expect(report.summary[0]!.scaling).toBe(1);
      for (const row of report.summary) {
        expect(row.exactlyOnce).toBe(true);
        expect(row.samplesPerSecond).toBeGreaterThan(0);
        expect(row.megabytesPerSecond).toBeGreaterThan(0);
        expect(row.perStreamSamplesPerSecond.min).toBeGreaterThan(0);
        expect(row.waitMs.p99).toBeGreaterThan(0);
        expect(row.cpuSeconds.loader).toBeGreaterThan(0);
        expect(row.cpuSeconds.client).toBeGreaterThan(0);
        expect(row.loaderCpuSecondsPerGB).toBeGreaterThan(0);
        expect(row.loaderPeakRssBytes).toBeGreaterThan(0);
      }
      // The ranks of every run together got each sample once per epoch: nothing twice, none
      // missing, none foreign.
      expect(report.runs.map((r) => r.streams).sort()).toEqual([1, 4]);
      for (const run of report.runs) {
        expect(run.perStreamSamplesPerSecond.length).toBe(run.streams);
        expect(run.samples).toBe(300 * epochs);
        expect(run.exactlyOnce).toEqual({
          expected: 300 * epochs,
          delivered: 300 * epochs,
          duplicates: 0,
          missing: 0,
          unexpected: 0,
          ok: true,
        });
      }
      // One loader and one client child per run, all gone.
      expect(report.childPids).toContain(report.servePid);
      expect(report.childPids.length).toBe(3);
      expect(report.childPids.filter(isProcessAlive)).toEqual([]);

      const written = await readFile(page, 'utf8');
      const day = new Date().toISOString().slice(0, 10);
      expect(written.startsWith('# Performance\n\n<!-- bench:concurrency:begin -->\n')).toBe(true);
      expect(written.endsWith(after)).toBe(true);
      expect(written).not.toContain('\nold\n');
      expect(written).toMatch(
        new RegExp(
          `^Measured (${day}|\\d{4}-\\d\\d-\\d\\d) by \`npx tsx src/cli/main\\.ts bench concurrency --quick .*--docs .*\` ` +
            'at commit \\w+( with uncommitted changes)? on .+, \\d+ cores, \\d+ GiB, Node v.+\\.$',
          'm',
        ),
      );
      expect(written).toMatch(/^\| streams \| samples\/s \| MB\/s \|/m);
      expect(written).toMatch(/^\| 4 \| .* \| yes \|$/m);
    },
  );
});
