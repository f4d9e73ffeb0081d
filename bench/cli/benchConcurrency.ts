import type { Command } from 'commander';
import {
  CONCURRENCY_FLAGS,
  resolveConcurrencyBenchOptions,
} from '../concurrency/ConcurrencyBenchOptions.js';
import { formatConcurrencyReport } from '../concurrency/formatConcurrencyReport.js';
import { runConcurrencyBench } from '../concurrency/runConcurrencyBench.js';
import { addBenchCommand } from './addBenchCommand.js';

/**
 * Adds `concurrency` to a `bench` command (scenario F): 1, 2, 4, 8 and 16 ranks of one job
 * streaming from one loader at once; aggregate and per-stream throughput, CPU, batch waits,
 * the loader's peak RSS and an exactly-once check across the ranks. Prints a Markdown table;
 * writes JSON under `.state/bench/`.
 */
export function addBenchConcurrencyCommand(bench: Command): void {
  addBenchCommand(bench, {
    name: 'concurrency',
    description:
      'k = 1, 2, 4, 8, 16 ranks of one job streaming from one loader at once: aggregate ' +
      'samples/s and MB/s, per-stream rates, CPU, batch waits, loader peak RSS, scaling ' +
      'against k=1, and a check that the ranks together got every sample exactly once',
    quick: 'well under a minute: 300 samples, 1 and 4 streams, 1 run',
    flags: CONCURRENCY_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runConcurrencyBench(
        resolveConcurrencyBenchOptions({ ...context, ...input }),
      );
      return { markdown: formatConcurrencyReport(report), table: 'concurrency' };
    },
  });
}
