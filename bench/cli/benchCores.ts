import path from 'node:path';
import { Command } from 'commander';
import { resolveCoresBenchOptions } from '../cores/CoresBenchOptions.js';
import { formatCoresReport } from '../cores/formatCoresReport.js';
import { runCoresBench } from '../cores/runCoresBench.js';
import { wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench cores`. */
export interface BenchCoresFlags extends DbFlags {
  quick: boolean;
  workers?: string;
  streams?: string;
  runs?: string;
  batchSize?: string;
  samples?: string;
  epochs?: string;
  dataset?: string;
  outDir?: string;
}

/**
 * Adds `cores` to a `bench` command: `serve --workers N` for N = 1 up to the cores, the same
 * k ranks against each: aggregate samples/s, the loader's CPU s per GB over all its
 * processes, RSS per worker, and an exactly-once check. Prints a Markdown table; writes JSON
 * under `.state/bench/`.
 */
export function addBenchCoresCommand(bench: Command): void {
  const cmd = bench
    .command('cores')
    .description(
      'serve --workers 1, 2, ... (up to the cores) under the same k ranks: aggregate ' +
        'samples/s, scaling, loader CPU s per GB (all its processes), RSS per worker, ' +
        'and an exactly-once check of the ranks',
    )
    .option('--quick', 'about a minute: 300 samples, 1 and 2 workers, 4 ranks, 1 run', false)
    .option('--workers <list>', 'worker counts (default 1 up to the cores, at least 1,2)')
    .option('--streams <k>', 'ranks streaming at once (default 8; quick 4)')
    .option('--runs <k>', 'runs of every worker count, interleaved (default 3, quick 1)')
    .option('--batch-size <n>', 'samples per batch (default 32)')
    .option('--samples <n>', 'distinct ~100 kB JPEG samples in the dataset (default 3000)')
    .option('--epochs <n>', 'epochs every rank streams per run (default 2; quick 1)')
    .option('--dataset <name>', 'dataset name (default that of bench stream for --samples)')
    .option('--out-dir <dir>', 'folder of the JSON report (default .state/bench)');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchCoresFlags) => {
      await withBenchContext(flags, async (context) => {
        const report = await runCoresBench(
          resolveCoresBenchOptions({
            ...context,
            quick: flags.quick,
            ...(flags.workers
              ? { workers: flags.workers.split(',').map((k) => wholeNumberFlag('--workers', k)) }
              : {}),
            ...(flags.streams ? { streams: wholeNumberFlag('--streams', flags.streams) } : {}),
            ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs) } : {}),
            ...(flags.batchSize
              ? { batchSize: wholeNumberFlag('--batch-size', flags.batchSize) }
              : {}),
            ...(flags.samples ? { samples: wholeNumberFlag('--samples', flags.samples) } : {}),
            ...(flags.epochs ? { epochs: wholeNumberFlag('--epochs', flags.epochs) } : {}),
            ...(flags.dataset ? { dataset: flags.dataset } : {}),
            ...(flags.outDir ? { outDir: path.resolve(flags.outDir) } : {}),
          }),
        );
        process.stdout.write(formatCoresReport(report));
      });
    }),
  );
}
