import path from 'node:path';
import { Command } from 'commander';
import { formatCeilingReport, runCeilingBench } from '../ceiling/runCeilingBench.js';
import { invalidArgument } from '../../src/core/index.js';
import { wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench ceiling`. */
export interface BenchCeilingFlags extends DbFlags {
  quick: boolean;
  runs?: string;
  gigabytes?: string;
  batchSize: string;
  sampleBytes: string;
  cpuProf?: string;
}

/**
 * Adds `ceiling` to a `bench` command: batches served from memory through the real loader
 * server and the SDK, next to a bare Node HTTP/2 stream of the same bytes (and gRPC with
 * grpc-js's default 64 KiB window). Prints a Markdown table and writes JSON under
 * `.state/bench/`.
 */
export function addBenchCeilingCommand(bench: Command): void {
  const cmd = bench
    .command('ceiling')
    .description(
      "the service's own ceiling: one batch served from memory (no database reads) through " +
        'the loader server and the SDK, each in its own process, next to a raw Node HTTP/2 ' +
        'stream of the same bytes and to gRPC with the default 64 KiB window: GB/s, ' +
        'batches/s, CPU seconds per GB of each side',
    )
    .option('--quick', '~300 MB per run, 1 run of each leg', false)
    .option('--runs <k>', 'timed runs of each leg, interleaved (default 3, quick 1)')
    .option('--gigabytes <n>', 'sample GB (10^9 bytes) sent per run (default 3, quick 0.3)')
    .option('--batch-size <n>', 'samples per batch', '128')
    .option('--sample-bytes <n>', 'bytes per sample', '100000')
    .option(
      '--cpu-prof <dir>',
      'write a CPU profile of each server child (node --cpu-prof) into dir',
    );
  addDbOptions(cmd).action(
    runAction(async (flags: BenchCeilingFlags) => {
      const gigabytes = flags.gigabytes === undefined ? undefined : Number(flags.gigabytes);
      if (gigabytes !== undefined && !(gigabytes > 0)) {
        throw invalidArgument(`--gigabytes ${JSON.stringify(flags.gigabytes)}: expected > 0`);
      }
      // `createLoaderServer` connects to a database even though these batches never touch it.
      const report = await withBenchContext(flags, (context) =>
        runCeilingBench({
          db: context.db,
          quick: flags.quick,
          ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs, 1) } : {}),
          ...(gigabytes === undefined ? {} : { bytesPerRun: gigabytes * 1e9 }),
          batchSize: wholeNumberFlag('--batch-size', flags.batchSize, 1),
          sampleBytes: wholeNumberFlag('--sample-bytes', flags.sampleBytes, 1),
          ...(flags.cpuProf ? { cpuProfileDir: path.resolve(flags.cpuProf) } : {}),
          outDir: path.join(context.stateRoot, 'bench'),
          log: context.log,
        }),
      );
      process.stdout.write(formatCeilingReport(report));
    }),
  );
}
