import path from 'node:path';
import type { Command } from 'commander';
import { formatFaultsReport, runFaultsBench } from '../../test/faults/index.js';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { addBenchCommand } from './addBenchCommand.js';
import { flag, onOff, text, wholeNumber, PHOTO_OUTPUT_FLAGS } from './benchOptions.js';

/** The flags of `bench faults`; the run's own defaults apply to those left out. */
const FAULTS_FLAGS = {
  ring: flag('--no-ring', 'leave out the 3-node ring and its node scenarios', onOff, true),
  mixedFaults: flag(
    '--mixed-faults <n>',
    'faults of the mixed run (default 50, quick 12)',
    wholeNumber('--mixed-faults', 1, 100_000),
  ),
  scenarios: flag(
    '--scenarios <names>',
    "comma-separated scenarios to run alone, e.g. 'mixed,node SIGSTOP' (default: all)",
    text,
  ),
  outDir: PHOTO_OUTPUT_FLAGS.outDir,
};

/**
 * Adds `faults` to a `bench` command: injects faults (loader kills and hand-offs, the
 * admission limit, network toxics between loader and database, connection resets between
 * trainer and loader, database node crash, hang and rolling restart on a 3-node ring, and a
 * long mixed run) while 2 or 4 ranks stream, and has an independent checker count what was
 * lost, repeated or foreign, the longest trainer stall and the loader crashes. Prints a
 * Markdown table; writes JSON under `.state/bench/`.
 */
export function addBenchFaultsCommand(bench: Command): void {
  addBenchCommand(bench, {
    name: 'faults',
    description:
      'inject faults while ranks stream (loader kills, admission limit, network toxics, ' +
      'trainer connection resets, database node kill/hang/rolling restart on a 3-node ring, ' +
      'a mixed run of 50 faults) and check every epoch with an independent checker: ' +
      'samples lost, duplicated, foreign, longest stall, loader crashes',
    quick: 'short forms (a few minutes): one fault per scenario, 12 mixed',
    flags: FAULTS_FLAGS,
    docs: true,
    run: async (input, context, f) => {
      const { report, file } = await runFaultsBench({
        db: context.db,
        quick: input.quick,
        ...(f.mixedFaults === undefined ? {} : { mixedFaults: f.mixedFaults }),
        ...(f.scenarios ? { scenarios: f.scenarios.split(',').map((n) => n.trim()) } : {}),
        toxiproxy: toxiproxyBinary(),
        skipRing: !f.ring,
        outDir: f.outDir ? path.resolve(f.outDir) : path.join(context.stateRoot, 'bench'),
        progress: context.progress,
        log: context.log,
        signal: context.signal,
      });
      return { markdown: `${formatFaultsReport(report)}figures: ${file}\n`, table: 'faults' };
    },
  });
}
