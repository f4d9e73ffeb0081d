import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { z } from 'zod';
import { formatIngestBench, runIngestBench } from '../../bench/ingest/runIngestBench.js';
import { runSplitBench } from '../../bench/splits/runSplitBench.js';
import { addBenchLatencyCommand } from './benchLatency.js';
import { addBenchStreamCommand } from './benchStream.js';
import { defaultStateDir } from '../../devdb/defaultStateDir.js';
import { createDbClient } from '../../server/db/createDbClient.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags } from '../dbOptions.js';
import { runAction } from '../runAction.js';

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
  const ingest = bench
    .command('ingest')
    .description(
      'ingest ~100 kB JPEGs (stored as they are) and MNIST into fresh keyspaces: samples/s, ' +
        'MB/s, CPU seconds of the ingest and of the local database; optionally the cold start',
    )
    .option('--images <n>', 'number of ~100 kB JPEGs', '3000')
    .option('--runs <n>', 'runs per source and concurrency', '3')
    .option('--concurrency <list>', 'ingest concurrencies to try', '32,128')
    .option('--mnist-limit <n>', 'only the first n MNIST images of each subset')
    .option('--cold-starts <n>', 'stop and start the local node this many times', '0');
  addDbOptions(ingest).action(
    runAction(
      async (
        flags: DbFlags & {
          images: string;
          runs: string;
          concurrency: string;
          mnistLimit?: string;
          coldStarts: string;
        },
      ) => {
        const client = await createDbClient(dbConfigFromFlags(flags));
        let result;
        try {
          result = await runIngestBench(client, {
            images: z.coerce.number().int().min(1).parse(flags.images),
            runs: z.coerce.number().int().min(1).max(20).parse(flags.runs),
            concurrencies: flags.concurrency
              .split(',')
              .map((c) => z.coerce.number().int().min(1).max(4096).parse(c)),
            ...(flags.mnistLimit
              ? { mnistLimit: z.coerce.number().int().min(1).parse(flags.mnistLimit) }
              : {}),
            coldStarts: z.coerce.number().int().min(0).max(10).parse(flags.coldStarts),
            log: (line) => process.stderr.write(`${line}\n`),
          });
        } finally {
          await client.shutdown();
        }
        process.stdout.write(formatIngestBench(result));
        const out = path.join(
          path.dirname(defaultStateDir()),
          'bench',
          `ingest-${Date.now()}.json`,
        );
        await mkdir(path.dirname(out), { recursive: true });
        await writeFile(
          out,
          JSON.stringify({ cores: os.cpus().length, node: process.version, ...result }, null, 2),
        );
        process.stdout.write(`figures: ${out}\n`);
      },
    ),
  );
  addBenchStreamCommand(bench);
  addBenchLatencyCommand(bench);
  return bench;
}
