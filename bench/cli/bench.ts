import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { z } from 'zod';
import { formatIngestBenchReport } from '../ingest/formatIngestBenchReport.js';
import { INGEST_BENCH_DEFAULTS } from '../ingest/IngestBenchOptions.js';
import { resolveIngestBenchOptions } from '../ingest/resolveIngestBenchOptions.js';
import { runIngestBench } from '../ingest/runIngestBench.js';
import { runSplitBench } from '../splits/runSplitBench.js';
import { addBenchCeilingCommand } from './benchCeiling.js';
import { addBenchConcurrencyCommand } from './benchConcurrency.js';
import { addBenchCoresCommand } from './benchCores.js';
import { addBenchFaultsCommand } from './benchFaults.js';
import { addBenchLatencyCommand } from './benchLatency.js';
import { addBenchRobustnessCommands } from './benchRobustness.js';
import { addBenchScaleCommand } from './benchScale.js';
import { addBenchStreamCommand } from './benchStream.js';
import { addBenchSuiteCommand } from './benchSuite.js';
import { addBenchTlsCommand } from './benchTls.js';
import { addBenchTransformCommand } from './benchTransform.js';
import { defaultStateDir } from '../../src/devdb/defaultStateDir.js';
import { startLocalCluster } from '../../src/devdb/localCluster.js';
import { invalidArgument, createDbClient } from '../../src/core/index.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags } from '../../src/cli/dbOptions.js';
import { createProgress } from '../../src/cli/progress.js';
import { runAction } from '../../src/cli/runAction.js';

/** Registers `bench` and its benchmarks. Figures are printed, never asserted. */
export function registerBenchCommand(program: Command): Command {
  const bench = program.command('bench').description('measure the loader (figures, not tests)');
  const splits = bench
    .command('splits')
    .description(
      'split an ImageNet-sized synthetic metadata set (1.28M rows, 1,000 classes, groups of ' +
        '1-500) 7:2:1, balanced, grouped: wall time, peak memory, worst deviation',
    )
    .option('--rows <n>', 'rows of the synthetic set', '1280000')
    .option('--runs <n>', 'split creations to time', '3');
  addDbOptions(splits).action(
    runAction(async (flags: DbFlags & { rows: string; runs: string }) => {
      const rows = z.coerce.number().int().min(1000).parse(flags.rows);
      const runs = z.coerce.number().int().min(1).max(20).parse(flags.runs);
      const client = await createDbClient(dbConfigFromFlags(flags));
      try {
        const result = await runSplitBench(client, {
          dataset: `bench_splits_${rows}`,
          shape: { rows, classes: 1000, maxGroup: 500 },
          runs,
          log: (line) => process.stderr.write(`${line}\n`),
        });
        const sorted = (f: (r: (typeof result.runs)[number]) => number): number[] =>
          result.runs.map(f).sort((a, b) => a - b);
        const median = (xs: number[]): number => xs[Math.floor(xs.length / 2)]!;
        const first = result.runs[0]!;
        const lines = [
          `| rows | groups | wall s (median of ${runs}) | scan s | assign s | peak RSS MiB | worst deviation |`,
          '|---|---|---|---|---|---|---|',
          `| ${first.rows} | ${first.groups} | ${median(sorted((r) => r.seconds)).toFixed(1)} | ` +
            `${median(sorted((r) => r.scanSeconds)).toFixed(1)} | ${median(sorted((r) => r.assignSeconds)).toFixed(1)} | ` +
            `${(median(sorted((r) => r.peakRssBytes)) / 2 ** 20).toFixed(0)} | ` +
            `${(100 * Math.max(...result.runs.map((r) => r.worstDeviation))).toFixed(2)}% |`,
          '',
          `parts: ${first.parts.map((p) => `${p.name} ${p.size} (${p.classes} classes)`).join(', ')}`,
        ];
        process.stdout.write(`${lines.join('\n')}\n`);
        const out = path.join(
          path.dirname(defaultStateDir()),
          'bench',
          `splits-${Date.now()}.json`,
        );
        await mkdir(path.dirname(out), { recursive: true });
        await writeFile(
          out,
          JSON.stringify({ cores: os.cpus().length, node: process.version, ...result }, null, 2),
        );
        process.stdout.write(`figures: ${out}\n`);
      } finally {
        await client.shutdown();
      }
    }),
  );
  addBenchIngestCommand(bench);
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

/** Flags of `bench ingest`. */
interface BenchIngestFlags extends DbFlags {
  quick: boolean;
  images?: string;
  runs?: string;
  concurrency?: string;
  mnist: boolean;
  mnistLimit?: string;
  coldStart: boolean;
  coldStarts?: string;
}

/**
 * Adds `ingest` to a `bench` command: ingest rate of stored-as-is ~100 kB JPEGs and of MNIST
 * with the CPU seconds of the ingest, the database and the rest of the machine, and the local
 * node's cold start. Prints Markdown and writes JSON under `.state/bench/`.
 */
function addBenchIngestCommand(bench: Command): void {
  const d = INGEST_BENCH_DEFAULTS;
  const cmd = bench
    .command('ingest')
    .description(
      'ingest ~100 kB JPEGs (stored as they are) and MNIST into fresh bench_ keyspaces: ' +
        'samples/s, MB/s, CPU seconds of the ingest, the database and the rest of the ' +
        "machine; optionally the local node's cold start",
    )
    .option('--quick', 'well under a minute: 200 images, 1 run, C=128, MNIST 500+500', false)
    .option('--images <n>', `distinct ~100 kB JPEGs (default ${d.images})`)
    .option('--runs <k>', `timed runs of each source and concurrency (default ${d.runs})`)
    .option(
      '--concurrency <list>',
      `ingest concurrencies to try (default ${d.concurrencies.join(',')})`,
    )
    .option('--no-mnist', 'skip MNIST')
    .option('--mnist-limit <n>', 'only the first n MNIST images of each subset (default all)')
    .option(
      '--cold-start',
      'also stop and start the local node as many times as --runs, timing the start',
      false,
    )
    .option('--cold-starts <n>', 'stop and start the local node this many times');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchIngestFlags) => {
      const ownCluster = !flags.contactPoints && !process.env.SCYLLA_LOADER_CONTACT_POINTS;
      const db = dbConfigFromFlags(flags);
      if (ownCluster) {
        const cluster = await startLocalCluster({
          stateDir: defaultStateDir(),
          log: (line) => process.stderr.write(`  ${line}\n`),
        });
        db.contactPoints = cluster.contactPoints;
        db.port = cluster.port;
      }
      const options = resolveIngestBenchOptions({
        db,
        localStateDir: ownCluster ? defaultStateDir() : undefined,
        stateRoot: path.dirname(defaultStateDir()),
        quick: flags.quick,
        ...(flags.images ? { images: int('--images', flags.images) } : {}),
        ...(flags.runs ? { runs: int('--runs', flags.runs) } : {}),
        ...(flags.concurrency
          ? { concurrencies: flags.concurrency.split(',').map((c) => int('--concurrency', c)) }
          : {}),
        mnist: flags.mnist,
        ...(flags.mnistLimit ? { mnistLimit: int('--mnist-limit', flags.mnistLimit) } : {}),
        coldStart: flags.coldStart,
        ...(flags.coldStarts ? { coldStarts: int('--cold-starts', flags.coldStarts) } : {}),
        progress: (label, total, unit) => createProgress(label, total, { unit }),
        log: (line) => process.stderr.write(`${line}\n`),
      });
      // `on`, not `once`: tsx relays a Ctrl-C as a second SIGINT, which without a listener
      // would kill the process before the keyspaces are dropped.
      const abort = new AbortController();
      const onSignal = (): void => abort.abort();
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const report = await runIngestBench({ ...options, signal: abort.signal });
        process.stdout.write(formatIngestBenchReport(report));
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    }),
  );
}

function int(flag: string, text: string): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(n)) {
    throw invalidArgument(`${flag} ${JSON.stringify(text)}: expected a whole number`);
  }
  return n;
}
