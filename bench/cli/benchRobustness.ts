import { Command } from 'commander';
import { formatConsumersReport } from '../faults/consumers/formatConsumersReport.js';
import { runConsumersBench } from '../faults/consumers/runConsumersBench.js';
import { formatSoakReport } from '../faults/soak/formatSoakReport.js';
import { runSoakBench } from '../faults/soak/runSoakBench.js';
import { formatFuzzReport } from '../faults/fuzz/formatFuzzReport.js';
import { runFuzzBench } from '../faults/fuzz/runFuzzBench.js';
import { wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench fuzz`. */
interface BenchFuzzFlags extends DbFlags {
  requests: string;
  seed?: string;
  concurrency: string;
  workers?: string;
}

/** Flags of `bench consumers`. */
interface BenchConsumersFlags extends DbFlags {
  stuck: string;
  slow: string;
  seconds: string;
}

/** Flags of `bench soak`. */
interface BenchSoakFlags extends DbFlags {
  streams: string;
  seconds: string;
}

/**
 * Adds the long forms of the robustness tests to a `bench` command: `fuzz` (generated
 * requests and hostile connections), `consumers` (slow and stuck readers) and `soak` (many
 * streams for minutes). Each spawns its own `serve`, prints a Markdown table and ends it.
 */
export function addBenchRobustnessCommands(bench: Command): void {
  const fuzz = bench
    .command('fuzz')
    .description(
      'fuzz a spawned serve: fast-check requests (StreamBatches, CreateSplits, raw protobuf) ' +
        'and hostile connections; statuses per kind of input, crashes, RSS and fds',
    )
    .option('--requests <n>', 'generated requests', '5000')
    .option('--seed <n>', 'fast-check seed (default random, printed)')
    .option('--concurrency <n>', 'requests in flight, each on its own connection', '8')
    .option('--workers <n>', "serve --workers (default serve's own)");
  addDbOptions(fuzz).action(
    runAction(async (flags: BenchFuzzFlags) => {
      const report = await withBenchContext(flags, (context) =>
        runFuzzBench({
          db: context.db,
          requests: wholeNumberFlag('--requests', flags.requests, 1),
          concurrency: wholeNumberFlag('--concurrency', flags.concurrency, 1),
          ...(flags.seed ? { seed: wholeNumberFlag('--seed', flags.seed, 0) } : {}),
          ...(flags.workers ? { workers: wholeNumberFlag('--workers', flags.workers, 1) } : {}),
          log: context.log,
          progress: (done, total) => context.log(`fuzz: ${done}/${total} requests answered`),
          signal: context.signal,
        }),
      );
      process.stdout.write(formatFuzzReport(report));
    }),
  );
  const consumers = bench
    .command('consumers')
    .description(
      'slow and stuck consumers of a spawned serve: loader RSS and heap against the documented ' +
        "window, a normal stream's rate beside them, keepalive closing a dead peer",
    )
    .option('--stuck <n>', 'streams that stop reading without closing', '16')
    .option('--slow <n>', 'streams read one batch a second', '8')
    .option('--seconds <n>', "seconds each of the normal stream's rates is measured over", '20');
  addDbOptions(consumers).action(
    runAction(async (flags: BenchConsumersFlags) => {
      const report = await withBenchContext(flags, (context) =>
        runConsumersBench({
          db: context.db,
          stuckStreams: wholeNumberFlag('--stuck', flags.stuck, 0),
          slowStreams: wholeNumberFlag('--slow', flags.slow, 0),
          measureSeconds: wholeNumberFlag('--seconds', flags.seconds, 1),
          log: context.log,
          signal: context.signal,
        }),
      );
      process.stdout.write(formatConsumersReport(report));
    }),
  );
  const soak = bench
    .command('soak')
    .description(
      'many concurrent streams against a spawned serve for minutes: RSS growth after warm-up, ' +
        'open file descriptors, event-loop delay p99 of every loader process',
    )
    .option('--streams <n>', 'concurrent streams', '64')
    .option('--seconds <n>', 'how long', '600');
  addDbOptions(soak).action(
    runAction(async (flags: BenchSoakFlags) => {
      const report = await withBenchContext(flags, (context) =>
        runSoakBench({
          db: context.db,
          streams: wholeNumberFlag('--streams', flags.streams, 1),
          seconds: wholeNumberFlag('--seconds', flags.seconds, 20),
          log: context.log,
          signal: context.signal,
        }),
      );
      process.stdout.write(formatSoakReport(report));
    }),
  );
}
