import path from 'node:path';
import type { Command } from 'commander';
import { formatCeilingReport, runCeilingBench } from '../ceiling/runCeilingBench.js';
import { addBenchCommand } from './addBenchCommand.js';
import { flag, positiveNumber, text, wholeNumber, batchSizeFlag } from './benchOptions.js';

/** The flags of `bench ceiling`; the run's own defaults apply to those left out. */
const CEILING_FLAGS = {
  runs: flag(
    '--runs <k>',
    'timed runs of each leg, interleaved (default 3, quick 1)',
    wholeNumber('--runs', 1, 1000),
  ),
  gigabytes: flag(
    '--gigabytes <n>',
    'sample GB (10^9 bytes) sent per run (default 3, quick 0.3)',
    positiveNumber('--gigabytes'),
  ),
  batchSize: batchSizeFlag(128),
  sampleBytes: flag(
    '--sample-bytes <n>',
    'bytes per sample',
    wholeNumber('--sample-bytes', 1, 1e9),
    100_000,
  ),
  cpuProfileDir: flag(
    '--cpu-prof <dir>',
    'write a CPU profile of each server child (node --cpu-prof) into dir',
    text,
  ),
};

/**
 * Adds `ceiling` to a `bench` command: batches served from memory through the real loader
 * server and the SDK, next to a bare Node HTTP/2 stream of the same bytes (and gRPC with
 * grpc-js's default 64 KiB window). Prints a Markdown table and writes JSON under
 * `.state/bench/`.
 */
export function addBenchCeilingCommand(bench: Command): void {
  addBenchCommand(bench, {
    name: 'ceiling',
    description:
      "the service's own ceiling: one batch served from memory (no database reads) through " +
      'the loader server and the SDK, each in its own process, next to a raw Node HTTP/2 ' +
      'stream of the same bytes and to gRPC with the default 64 KiB window: GB/s, ' +
      'batches/s, CPU seconds per GB of each side',
    quick: '~300 MB per run, 1 run of each leg',
    flags: CEILING_FLAGS,
    docs: true,
    // `createLoaderServer` connects to a database even though these batches never touch it.
    run: async (input, context, f) => {
      const report = await runCeilingBench({
        db: context.db,
        quick: input.quick,
        ...(f.runs === undefined ? {} : { runs: f.runs }),
        ...(f.gigabytes === undefined ? {} : { bytesPerRun: f.gigabytes * 1e9 }),
        batchSize: f.batchSize,
        sampleBytes: f.sampleBytes,
        ...(f.cpuProfileDir ? { cpuProfileDir: path.resolve(f.cpuProfileDir) } : {}),
        outDir: path.join(context.stateRoot, 'bench'),
        log: context.log,
      });
      return { markdown: formatCeilingReport(report), table: 'ceiling' };
    },
  });
}
