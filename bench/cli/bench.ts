import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { formatIngestBenchReport } from '../ingest/formatIngestBenchReport.js';
import { INGEST_FLAGS, resolveIngestBenchOptions } from '../ingest/resolveIngestBenchOptions.js';
import { runIngestBench } from '../ingest/runIngestBench.js';
import { formatSplitBench, runSplitBench } from '../splits/runSplitBench.js';
import { addBenchCommand } from './addBenchCommand.js';
import { addBenchCeilingCommand } from './benchCeiling.js';
import { addBenchConcurrencyCommand } from './benchConcurrency.js';
import { addBenchCoresCommand } from './benchCores.js';
import { addBenchFaultsCommand } from './benchFaults.js';
import { addBenchLatencyCommand } from './benchLatency.js';
import { flag, wholeNumber } from './benchOptions.js';
import { addBenchRobustnessCommands } from './benchRobustness.js';
import { addBenchScaleCommand } from './benchScale.js';
import { addBenchStreamCommand } from './benchStream.js';
import { addBenchSuiteCommand } from './benchSuite.js';
import { addBenchTlsCommand } from './benchTls.js';
import { addBenchTransformCommand } from './benchTransform.js';
import { defaultStateDir } from '../../src/devdb/defaultStateDir.js';
import { createDbClient } from '../../src/core/index.js';

const SPLITS_FLAGS = {
  rows: flag(
    '--rows <n>',
    'rows of the synthetic set',
    wholeNumber('--rows', 1000, 1e9),
    1_280_000,
  ),
  runs: flag('--runs <n>', 'split creations to time', wholeNumber('--runs', 1, 20), 3),
};

/** Registers `bench` and its benchmarks. Figures are printed, never asserted. */
export function registerBenchCommand(program: Command): Command {
  const bench = program.command('bench').description('measure the loader (figures, not tests)');
  addBenchCommand(bench, {
    name: 'splits',
    description:
      'split an ImageNet-sized synthetic metadata set (1.28M rows, 1,000 classes, groups of ' +
      '1-500) 7:2:1, balanced, grouped: wall time, peak memory, worst deviation',
    flags: SPLITS_FLAGS,
    docs: true,
    run: async (_input, context, { rows, runs }) => {
      const client = await createDbClient(context.db);
      try {
        const result = await runSplitBench(client, {
          dataset: `bench_splits_${rows}`,
          shape: { rows, classes: 1000, maxGroup: 500 },
          runs,
          log: context.log,
        });
        const out = path.join(context.stateRoot, 'bench', `splits-${Date.now()}.json`);
        await mkdir(path.dirname(out), { recursive: true });
        const figures = { cores: os.cpus().length, node: process.version, ...result };
        await writeFile(out, JSON.stringify(figures, null, 2));
        return { markdown: `${formatSplitBench(result.runs)}figures: ${out}\n`, table: 'splits' };
      } finally {
        await client.shutdown();
      }
    },
  });
  addBenchCommand(bench, {
    name: 'ingest',
    description:
      'ingest ~100 kB JPEGs (stored as they are) and MNIST into fresh bench_ keyspaces: ' +
      'samples/s, MB/s, CPU seconds of the ingest, the database and the rest of the ' +
      "machine; optionally the local node's cold start",
    quick: 'well under a minute: 200 images, 1 run, C=128, MNIST 500+500',
    flags: INGEST_FLAGS,
    docs: true,
    run: async (input, context, _values, flags) => {
      const ownCluster = !flags['contactPoints'] && !process.env.SCYLLA_LOADER_CONTACT_POINTS;
      const report = await runIngestBench(
        resolveIngestBenchOptions({
          ...context,
          ...input,
          localStateDir: ownCluster ? defaultStateDir() : undefined,
        }),
      );
      return { markdown: formatIngestBenchReport(report), table: 'ingest' };
    },
  });
  addBenchRobustnessCommands(bench);
  addBenchStreamCommand(bench);
  addBenchLatencyCommand(bench);
  addBenchCeilingCommand(bench);
  addBenchSuiteCommand(bench);
  addBenchScaleCommand(bench);
  addBenchConcurrencyCommand(bench);
  addBenchCoresCommand(bench);
  addBenchTransformCommand(bench);
  addBenchTlsCommand(bench);
  addBenchFaultsCommand(bench);
  return bench;
}
