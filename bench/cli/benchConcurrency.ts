import path from 'node:path';
import { Command } from 'commander';
import { resolveConcurrencyBenchOptions } from '../concurrency/ConcurrencyBenchOptions.js';
import { formatConcurrencyReport } from '../concurrency/formatConcurrencyReport.js';
import { runConcurrencyBench } from '../concurrency/runConcurrencyBench.js';
import { wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench concurrency`. */
export interface BenchConcurrencyFlags extends DbFlags {
  quick: boolean;
  streams?: string;
  runs?: string;
  batchSize?: string;
  samples?: string;
  epochs?: string;
  dataset?: string;
  outDir?: string;
  cpuProf?: string;
}

/**
 * Adds `concurrency` to a `bench` command (scenario F): 1, 2, 4, 8 and 16 ranks of one job
 * streaming from one loader at once; aggregate and per-stream throughput, CPU, batch waits,
 * the loader's peak RSS and an exactly-once check across the ranks. Prints a Markdown table;
 * writes JSON under `.state/bench/`.
 */
export function addBenchConcurrencyCommand(bench: Command): void {
  const cmd = bench
    .command('concurrency')
    .description(
      'k = 1, 2, 4, 8, 16 ranks of one job streaming from one loader at once: aggregate ' +
        'samples/s and MB/s, per-stream rates, CPU, batch waits, loader peak RSS, scaling ' +
        'against k=1, and a check that the ranks together got every sample exactly once',
    )
    .option('--quick', 'well under a minute: 300 samples, 1 and 4 streams, 1 run', false)
    .option('--streams <list>', 'numbers of concurrent streams (default 1,2,4,8,16; quick 1,4)')
    .option('--runs <k>', 'runs of every k, interleaved; medians reported (default 3, quick 1)')
    .option('--batch-size <n>', 'samples per batch (default 32)')
    .option('--samples <n>', 'distinct ~100 kB JPEG samples in the dataset (default 3000)')
    .option('--epochs <n>', 'epochs every rank streams per run (default 2)')
    .option('--dataset <name>', 'dataset name (default that of bench stream for --samples)')
    .option('--out-dir <dir>', 'folder of the JSON report (default .state/bench)')
    .option('--cpu-prof <dir>', 'write a CPU profile of the loader (node --cpu-prof) into dir');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchConcurrencyFlags) => {
      await withBenchContext(flags, async (context) => {
        const report = await runConcurrencyBench(
          resolveConcurrencyBenchOptions({
            ...context,
            quick: flags.quick,
            ...(flags.streams
              ? { streams: flags.streams.split(',').map((k) => wholeNumberFlag('--streams', k)) }
              : {}),
            ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs) } : {}),
            ...(flags.batchSize
              ? { batchSize: wholeNumberFlag('--batch-size', flags.batchSize) }
              : {}),
            ...(flags.samples ? { samples: wholeNumberFlag('--samples', flags.samples) } : {}),
            ...(flags.epochs ? { epochs: wholeNumberFlag('--epochs', flags.epochs) } : {}),
            ...(flags.dataset ? { dataset: flags.dataset } : {}),
            ...(flags.outDir ? { outDir: path.resolve(flags.outDir) } : {}),
            ...(flags.cpuProf ? { cpuProfileDir: path.resolve(flags.cpuProf) } : {}),
          }),
        );
        process.stdout.write(formatConcurrencyReport(report));
      });
    }),
  );
}
