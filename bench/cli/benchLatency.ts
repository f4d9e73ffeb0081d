import { Command } from 'commander';
import { formatLatencyReport } from '../latency/formatLatencyReport.js';
import { resolveLatencyBenchOptions } from '../latency/LatencyBenchOptions.js';
import { runLatencyBench } from '../latency/runLatencyBench.js';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { placementsFlag, wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench latency`. */
export interface BenchLatencyFlags extends DbFlags {
  quick: boolean;
  samples?: string;
  runs?: string;
  batchSize?: string;
  rtts?: string;
  placements?: string;
  trainerRate?: string;
  dataset?: string;
}

/**
 * Adds `latency` to a `bench` command: B (IN_ORDER, prefetch 2) and C (OUT_OF_ORDER) through
 * toxiproxy at injected round trips of 0, 20 and 150 ms, and with a congested second route.
 * Prints a Markdown table; writes JSON and an SVG chart under `.state/bench/`.
 */
export function addBenchLatencyCommand(bench: Command): void {
  const cmd = bench
    .command('latency')
    .description(
      'throughput and batch waits of the loader in order (prefetch 2) and out of order ' +
        '(defaults) with round trips of 0, 20 and 150 ms injected by toxiproxy between loader ' +
        'and database, and with a congested second route; Markdown table, JSON and SVG chart',
    )
    .option('--quick', 'about a minute: 300 samples, 1 run, round trips 0 and 20 ms only', false)
    .option('--samples <n>', 'distinct ~100 kB JPEG samples in the dataset (default 3000)')
    .option('--runs <k>', 'runs of every scenario, interleaved; medians reported (default 3)')
    .option('--batch-size <n>', 'samples per batch (default 64, quick 32)')
    .option('--rtts <list>', 'injected round trips in ms (default 0,20,150; quick 0,20)')
    .option(
      '--placements <list>',
      'unpinned, pinned (database and toxiproxy on one core, loaders and trainers on the other) ' +
        'or both (default both; quick: unpinned)',
    )
    .option(
      '--trainer-rate <n>',
      'samples/s of the paced trainer whose stalls are reported (default 1000; 0: none)',
    )
    .option('--dataset <name>', 'dataset name (default that of bench stream for --samples)');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchLatencyFlags) => {
      await withBenchContext(flags, async (context) => {
        const report = await runLatencyBench(
          resolveLatencyBenchOptions({
            ...context,
            toxiproxy: toxiproxyBinary(),
            quick: flags.quick,
            ...(flags.samples ? { samples: wholeNumberFlag('--samples', flags.samples) } : {}),
            ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs) } : {}),
            ...(flags.batchSize
              ? { batchSize: wholeNumberFlag('--batch-size', flags.batchSize) }
              : {}),
            ...(flags.rtts
              ? { rttsMs: flags.rtts.split(',').map((r) => wholeNumberFlag('--rtts', r)) }
              : {}),
            ...(flags.placements ? { placements: placementsFlag(flags.placements) } : {}),
            ...(flags.trainerRate
              ? { trainerSamplesPerSecond: wholeNumberFlag('--trainer-rate', flags.trainerRate) }
              : {}),
            ...(flags.dataset ? { dataset: flags.dataset } : {}),
          }),
        );
        process.stdout.write(formatLatencyReport(report));
      });
    }),
  );
}
