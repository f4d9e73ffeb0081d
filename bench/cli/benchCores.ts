import type { Command } from 'commander';
import { CORES_FLAGS, resolveCoresBenchOptions } from '../cores/CoresBenchOptions.js';
import { formatCoresReport } from '../cores/formatCoresReport.js';
import { runCoresBench } from '../cores/runCoresBench.js';
import { addBenchCommand } from './addBenchCommand.js';

/**
 * Adds `cores` to a `bench` command: `serve --workers N` for N = 1 up to the cores, the same
 * k ranks against each: aggregate samples/s, the loader's CPU s per GB over all its
 * processes, RSS per worker, and an exactly-once check. Prints a Markdown table; writes JSON
 * under `.state/bench/`.
 */
export function addBenchCoresCommand(bench: Command): void {
  addBenchCommand(bench, {
    name: 'cores',
    description:
      'serve --workers 1, 2, ... (up to the cores) under the same k ranks: aggregate ' +
      'samples/s, scaling, loader CPU s per GB (all its processes), RSS per worker, ' +
      'and an exactly-once check of the ranks',
    quick: 'about a minute: 300 samples, 1 and 2 workers, 4 ranks, 1 run',
    flags: CORES_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runCoresBench(resolveCoresBenchOptions({ ...context, ...input }));
      return { markdown: formatCoresReport(report), table: 'cores' };
    },
  });
}
