import type { Command } from 'commander';
import { runStreamBench } from '../stream/runStreamBench.js';
import { formatStreamReport } from '../stream/formatStreamReport.js';
import { dropBenchDataset } from '../dataset/benchDataset.js';
import { resolveStreamBenchOptions, STREAM_FLAGS } from '../stream/resolveStreamBenchOptions.js';
import { createDbClient } from '../../src/core/index.js';
import { addBenchCommand } from './addBenchCommand.js';
import { flag, onOff, parseValue, wholeNumber } from './benchOptions.js';

/**
 * Adds `stream` to a `bench` command: the streaming throughput benchmark (service and SDK
 * against a tight loop on the same driver, unpinned and pinned), plus the batch-layout
 * micro-benchmark. Prints a Markdown table and writes JSON under `.state/bench/`; with
 * `--group-reads`, its table is the grouped-reads one.
 */
export function addBenchStreamCommand(bench: Command): void {
  const cmd = addBenchCommand(bench, {
    name: 'stream',
    description:
      'throughput of photo samples (~104 kB, or 224x224 ~15 kB) through the loader and the ' +
      'SDK versus a tight loop on the same driver, unpinned and with the database pinned to ' +
      'one core and the loader and client to another; plus the batch-layout encode/decode ' +
      'micro-benchmark',
    quick: 'about a minute: 300 samples, 1 run, C=128, unpinned only',
    flags: {
      ...STREAM_FLAGS,
      drop: flag(
        '--drop',
        'drop the benchmark dataset (of --samples / --dataset) and exit',
        onOff,
        false,
      ),
    },
    docs: true,
    adjustDb: (db, flags) => {
      const text = flags['connectionsPerHost'] ?? process.env.SCYLLA_LOADER_CONNECTIONS_PER_HOST;
      if (text !== undefined) {
        db.connectionsPerHost = parseValue(wholeNumber('--connections-per-host', 1, 1024), text);
      }
    },
    run: async (input, context) => {
      const options = resolveStreamBenchOptions({ ...context, ...input });
      if (input.drop === true) {
        const client = await createDbClient(context.db);
        try {
          const existed = await dropBenchDataset(client, options.dataset);
          return { markdown: `${existed ? 'dropped' : 'no'} dataset ${options.dataset}\n` };
        } finally {
          await client.shutdown();
        }
      }
      const report = await runStreamBench(options);
      const table = options.groupReads === undefined ? 'stream' : 'grouped-reads';
      return { markdown: formatStreamReport(report), table };
    },
  });
  cmd.option(
    '--connections-per-host <n>',
    'driver connections per host, for the loader and the tight loop alike ' +
      '(default $SCYLLA_LOADER_CONNECTIONS_PER_HOST)',
  );
}
