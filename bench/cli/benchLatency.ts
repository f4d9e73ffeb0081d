import type { Command } from 'commander';
import { formatLatencyReport } from '../latency/formatLatencyReport.js';
import { LATENCY_FLAGS, resolveLatencyBenchOptions } from '../latency/LatencyBenchOptions.js';
import { runLatencyBench } from '../latency/runLatencyBench.js';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { addBenchCommand } from './addBenchCommand.js';

/**
 * Adds `latency` to a `bench` command: B (IN_ORDER, prefetch 2) and C (OUT_OF_ORDER) through
 * toxiproxy at injected round trips of 0, 20 and 150 ms, and with a congested second route.
 * Prints a Markdown table; writes JSON and an SVG chart under `.state/bench/`.
 */
export function addBenchLatencyCommand(bench: Command): void {
  addBenchCommand(bench, {
    name: 'latency',
    description:
      'throughput and batch waits of the loader in order (prefetch 2) and out of order ' +
      '(defaults) with round trips of 0, 20 and 150 ms injected by toxiproxy between loader ' +
      'and database, and with a congested second route; Markdown table, JSON and SVG chart',
    quick: 'about a minute: 300 samples, 1 run, round trips 0 and 20 ms only',
    flags: LATENCY_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runLatencyBench(
        resolveLatencyBenchOptions({ ...context, ...input, toxiproxy: toxiproxyBinary() }),
      );
      return { markdown: formatLatencyReport(report), table: 'latency' };
    },
  });
}
