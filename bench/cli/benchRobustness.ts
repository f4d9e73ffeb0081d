import type { Command } from 'commander';
import {
  formatConsumersReport,
  formatFuzzReport,
  formatSoakReport,
  runConsumersBench,
  runFuzzBench,
  runSoakBench,
} from '../../test/faults/index.js';
import { addBenchCommand } from './addBenchCommand.js';
import { flag, wholeNumber } from './benchOptions.js';

const FUZZ_FLAGS = {
  requests: flag('--requests <n>', 'generated requests', wholeNumber('--requests', 1, 1e9), 5000),
  seed: flag(
    '--seed <n>',
    'fast-check seed (default random, printed)',
    wholeNumber('--seed', 0, 2 ** 31),
  ),
  concurrency: flag(
    '--concurrency <n>',
    'requests in flight, each on its own connection',
    wholeNumber('--concurrency', 1, 10_000),
    8,
  ),
  workers: flag(
    '--workers <n>',
    "serve --workers (default serve's own)",
    wholeNumber('--workers', 1, 64),
  ),
};

const CONSUMERS_FLAGS = {
  stuck: flag(
    '--stuck <n>',
    'streams that stop reading without closing',
    wholeNumber('--stuck', 0, 10_000),
    16,
  ),
  slow: flag('--slow <n>', 'streams read one batch a second', wholeNumber('--slow', 0, 10_000), 8),
  seconds: flag(
    '--seconds <n>',
    "seconds each of the normal stream's rates is measured over",
    wholeNumber('--seconds', 1, 86_400),
    20,
  ),
};

const SOAK_FLAGS = {
  streams: flag('--streams <n>', 'concurrent streams', wholeNumber('--streams', 1, 10_000), 64),
  seconds: flag('--seconds <n>', 'how long', wholeNumber('--seconds', 20, 86_400), 600),
};

/**
 * Adds the long forms of the robustness tests to a `bench` command: `fuzz` (generated
 * requests and hostile connections), `consumers` (slow and stuck readers) and `soak` (many
 * streams for minutes). Each spawns its own `serve`, prints a Markdown table and ends it;
 * with `--docs`, each writes its table as the page's robustness table.
 */
export function addBenchRobustnessCommands(bench: Command): void {
  addBenchCommand(bench, {
    name: 'fuzz',
    description:
      'fuzz a spawned serve: fast-check requests (StreamBatches, CreateSplits, raw protobuf) ' +
      'and hostile connections; statuses per kind of input, crashes, RSS and fds',
    flags: FUZZ_FLAGS,
    docs: true,
    run: async (_input, context, f) => {
      const report = await runFuzzBench({
        db: context.db,
        requests: f.requests,
        concurrency: f.concurrency,
        ...(f.seed === undefined ? {} : { seed: f.seed }),
        ...(f.workers === undefined ? {} : { workers: f.workers }),
        log: context.log,
        progress: (done, total) => context.log(`fuzz: ${done}/${total} requests answered`),
        signal: context.signal,
      });
      return { markdown: formatFuzzReport(report), table: 'robustness' };
    },
  });
  addBenchCommand(bench, {
    name: 'consumers',
    description:
      'slow and stuck consumers of a spawned serve: loader RSS and heap against the documented ' +
      "window, a normal stream's rate beside them, keepalive closing a dead peer",
    flags: CONSUMERS_FLAGS,
    docs: true,
    run: async (_input, context, f) => {
      const report = await runConsumersBench({
        db: context.db,
        stuckStreams: f.stuck,
        slowStreams: f.slow,
        measureSeconds: f.seconds,
        log: context.log,
        signal: context.signal,
      });
      return { markdown: formatConsumersReport(report), table: 'robustness' };
    },
  });
  addBenchCommand(bench, {
    name: 'soak',
    description:
      'many concurrent streams against a spawned serve for minutes: RSS growth after warm-up, ' +
      'open file descriptors, event-loop delay p99 of every loader process',
    flags: SOAK_FLAGS,
    docs: true,
    run: async (_input, context, f) => {
      const report = await runSoakBench({
        db: context.db,
        streams: f.streams,
        seconds: f.seconds,
        log: context.log,
        signal: context.signal,
      });
      return { markdown: formatSoakReport(report), table: 'soak' };
    },
  });
}
