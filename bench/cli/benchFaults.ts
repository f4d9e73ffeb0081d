import path from 'node:path';
import { Command } from 'commander';
import { formatFaultsReport } from '../faults/formatFaultsReport.js';
import { runFaultsBench } from '../faults/runFaultsBench.js';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench faults`. */
export interface BenchFaultsFlags extends DbFlags {
  quick: boolean;
  ring: boolean;
  mixedFaults?: string;
  scenarios?: string;
  outDir?: string;
}

/**
 * Adds `faults` to a `bench` command: injects faults (loader kills and hand-offs, the
 * admission limit, network toxics between loader and database, connection resets between
 * trainer and loader, database node crash, hang and rolling restart on a 3-node ring, and a
 * long mixed run) while 2 or 4 ranks stream, and has an independent checker count what was
 * lost, repeated or foreign, the longest trainer stall and the loader crashes. Prints a
 * Markdown table; writes JSON under `.state/bench/`.
 */
export function addBenchFaultsCommand(bench: Command): void {
  const cmd = bench
    .command('faults')
    .description(
      'inject faults while ranks stream (loader kills, admission limit, network toxics, ' +
        'trainer connection resets, database node kill/hang/rolling restart on a 3-node ring, ' +
        'a mixed run of 50 faults) and check every epoch with an independent checker: ' +
        'samples lost, duplicated, foreign, longest stall, loader crashes',
    )
    .option('--quick', 'short forms (a few minutes): one fault per scenario, 12 mixed', false)
    .option('--no-ring', 'leave out the 3-node ring and its node scenarios')
    .option('--mixed-faults <n>', 'faults of the mixed run (default 50, quick 12)')
    .option(
      '--scenarios <names>',
      "comma-separated scenarios to run alone, e.g. 'mixed,node SIGSTOP' (default: all)",
    )
    .option('--out-dir <dir>', 'folder of the JSON report (default .state/bench)');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchFaultsFlags) => {
      await withBenchContext(flags, async (context) => {
        const { report, file } = await runFaultsBench({
          db: context.db,
          quick: flags.quick,
          ...(flags.mixedFaults
            ? { mixedFaults: wholeNumberFlag('--mixed-faults', flags.mixedFaults, 1) }
            : {}),
          ...(flags.scenarios
            ? { scenarios: flags.scenarios.split(',').map((n) => n.trim()) }
            : {}),
          toxiproxy: toxiproxyBinary(),
          skipRing: !flags.ring,
          outDir: flags.outDir ? path.resolve(flags.outDir) : path.join(context.stateRoot, 'bench'),
          progress: context.progress,
          log: context.log,
          signal: context.signal,
        });
        process.stdout.write(formatFaultsReport(report));
        process.stdout.write(`figures: ${file}\n`);
      });
    }),
  );
}
