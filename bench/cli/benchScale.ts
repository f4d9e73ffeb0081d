import { Command } from 'commander';
import { formatScaleReport } from '../scale/formatScaleReport.js';
import { runScaleBench } from '../scale/runScaleBench.js';
import { FULL_SIZES, resolveScaleBenchOptions } from '../scale/ScaleBenchOptions.js';
import { wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench scale`. */
interface BenchScaleFlags extends DbFlags {
  quick: boolean;
  sizes?: string;
  runs?: string;
  batchSize?: string;
  samplesPerRun?: string;
  dataset?: string;
  outDir?: string;
}

/**
 * Adds `scale` to a `bench` command: loader peak RSS, CPU per batch and time to first batch
 * for splits of 10^4, 10^5 and 10^6 samples of 100 bytes. Prints a Markdown table and writes
 * JSON under `.state/bench/`.
 */
export function addBenchScaleCommand(bench: Command): void {
  const cmd = bench
    .command('scale')
    .description(
      'splits of 10^4, 10^5 and 10^6 samples of 100 bytes, each streamed once per run through ' +
        'a fresh loader: its peak RSS, CPU ms per batch, time to the first batch',
    )
    .option('--quick', 'well under a minute once the data exists: sizes 1000,10000, 1 run', false)
    .option('--sizes <list>', `split sizes (default ${FULL_SIZES.join(',')})`)
    .option('--runs <k>', 'runs of each size, each in a fresh loader (default 3)')
    .option('--batch-size <n>', 'samples per batch (default 256)')
    .option(
      '--samples-per-run <n>',
      'stop each run after this many samples (whole batches): splits compared at equal stream length',
    )
    .option('--dataset <name>', 'dataset name (default bench_scale_100b, or _n<N>)')
    .option('--out-dir <dir>', 'folder of the JSON report (default .state/bench)');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchScaleFlags) => {
      await withBenchContext(flags, async (context) => {
        const report = await runScaleBench(
          resolveScaleBenchOptions({
            ...context,
            quick: flags.quick,
            ...(flags.sizes
              ? { sizes: flags.sizes.split(',').map((s) => wholeNumberFlag('--sizes', s)) }
              : {}),
            ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs) } : {}),
            ...(flags.batchSize
              ? { batchSize: wholeNumberFlag('--batch-size', flags.batchSize) }
              : {}),
            ...(flags.samplesPerRun
              ? { samplesPerRun: wholeNumberFlag('--samples-per-run', flags.samplesPerRun, 1) }
              : {}),
            ...(flags.dataset ? { dataset: flags.dataset } : {}),
            ...(flags.outDir ? { outDir: flags.outDir } : {}),
          }),
        );
        process.stdout.write(formatScaleReport(report));
      });
    }),
  );
}
