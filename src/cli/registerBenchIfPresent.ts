import { existsSync } from 'node:fs';
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
 * where to find them instead. Loaded by URL so that the shipped
 * build never depends on them.
 */
export async function registerBenchIfPresent(program: Command): Promise<void> {
  // The folder decides, not the import's error: a checkout whose benchmarks fail to load (a
  // missing dependency of theirs) must say so, not claim they are absent.
  if (existsSync(new URL('../../bench/', import.meta.url))) {
    const entry = new URL('../../bench/cli/bench.js', import.meta.url);
    ((await import(entry.href)) as BenchEntry).registerBenchCommand(program);
    return;
  }
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
}
