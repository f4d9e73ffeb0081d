import type { Command } from 'commander';
import { formatScaleReport } from '../scale/formatScaleReport.js';
import { runScaleBench } from '../scale/runScaleBench.js';
import { resolveScaleBenchOptions, SCALE_FLAGS } from '../scale/ScaleBenchOptions.js';
import { addBenchCommand } from './addBenchCommand.js';

/**
 * Adds `scale` to a `bench` command: loader peak RSS, CPU per batch and time to first batch
 * for splits of 10^4, 10^5 and 10^6 samples of 100 bytes. Prints a Markdown table and writes
 * JSON under `.state/bench/`.
 */
export function addBenchScaleCommand(bench: Command): void {
  addBenchCommand(bench, {
    name: 'scale',
    description:
      'splits of 10^4, 10^5 and 10^6 samples of 100 bytes, each streamed once per run through ' +
      'a fresh loader: its peak RSS, CPU ms per batch, time to the first batch',
    quick: 'well under a minute once the data exists: sizes 1000,10000, 1 run',
    flags: SCALE_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runScaleBench(resolveScaleBenchOptions({ ...context, ...input }));
      return { markdown: formatScaleReport(report), table: 'scale' };
    },
  });
}
