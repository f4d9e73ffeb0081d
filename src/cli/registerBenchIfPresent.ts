import type { Command } from 'commander';
import { LoaderError } from '../core/index.js';
import { runAction } from './runAction.js';

/** What the benchmarks' entry module exports (see `bench/cli/bench.ts`). */
interface BenchEntry {
  registerBenchCommand(program: Command): Command;
}

/**
 * Registers `bench` when the benchmarks are present. They live outside the shipped tree, in the
 * checkout's top-level `bench/`, so a production image or package has none; there `bench` says
 * where to find them instead of failing on a missing module. Loaded by URL so that the shipped
 * build never depends on them.
 */
export async function registerBenchIfPresent(program: Command): Promise<void> {
  const entry = new URL('../../bench/cli/bench.js', import.meta.url);
  let loaded: BenchEntry;
  try {
    loaded = (await import(entry.href)) as BenchEntry;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw err;
    program
      .command('bench')
      .description('benchmarks (in a checkout of the repository only)')
      .allowUnknownOption()
      .allowExcessArguments()
      .action(
        runAction(async () => {
          throw new LoaderError(
            'FAILED_PRECONDITION',
            'the benchmarks are not part of this installation; run them from a checkout of ' +
              'the repository: npx tsx src/cli/main.ts bench <name>',
          );
        }),
      );
    return;
  }
  loaded.registerBenchCommand(program);
}
