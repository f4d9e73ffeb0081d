import type { Command } from 'commander';
import { addDbOptions, type DbFlags, runAction } from '../../src/cli/index.js';
import type { DbConfig } from '../../src/core/index.js';
import { assertCommittedTree, printReport, type DocTableName } from '../report/docTables.js';
import { withBenchContext, type BenchContext } from './benchContext.js';
import {
  addFlags,
  DOCS_FLAG,
  flagInput,
  parseFlags,
  type BenchFlags,
  type FlagInput,
  type FlagValues,
} from './benchOptions.js';

/** What a bench command's body returns: its Markdown report and the docs table it feeds. */
export interface BenchOutput {
  markdown: string;
  /** Where `--docs` writes its tables; absent: the command has no `--docs`. */
  table?: DocTableName;
  /** The part of `markdown` whose tables `--docs` writes (default: all of it). */
  docsMarkdown?: string;
}

/** A bench command: its flags, how `--quick` reads, and the run. */
export interface BenchCommandSpec<S extends BenchFlags> {
  name: string;
  description: string;
  /** Help of `--quick`; absent: no quick mode. */
  quick?: string;
  flags: S;
  /** Whether `--docs` is offered (the benches whose figures the docs cite). */
  docs: boolean;
  /** False: the benchmark starts a database node of its own (no database flags). */
  database?: boolean;
  /** Changes the database settings the flags gave, before the context is made. */
  adjustDb?: (db: DbConfig, flags: Record<string, unknown>) => void;
  /**
   * The run: `input` is the flags as given (for a resolve function of the bench's own),
   * `values` the same parsed with their defaults, `flags` every option commander parsed.
   */
  run: (
    input: FlagInput<S> & { quick: boolean },
    context: BenchContext,
    values: FlagValues<S>,
    flags: Record<string, unknown>,
  ) => Promise<BenchOutput>;
}

/**
 * Adds one benchmark to `bench`: its flags (with their defaults in the help), `--quick`,
 * `--docs <file.md>` and the database flags; the body runs in a {@link BenchContext}, and its
 * report is printed and, with `--docs`, its tables written between the page's markers.
 */
export function addBenchCommand<S extends BenchFlags>(
  bench: Command,
  spec: BenchCommandSpec<S>,
): Command {
  const cmd = bench.command(spec.name).description(spec.description);
  if (spec.quick) cmd.option('--quick', spec.quick, false);
  addFlags(cmd, spec.docs ? { ...spec.flags, ...DOCS_FLAG } : spec.flags);
  (spec.database === false ? cmd : addDbOptions(cmd)).action(
    runAction(async (flags: DbFlags & { quick?: boolean }) => {
      const all = { ...flags } as Record<string, unknown>;
      const { docs } = parseFlags(DOCS_FLAG, flagInput(DOCS_FLAG, all));
      if (docs !== undefined) assertCommittedTree(docs);
      const quick = flags.quick ?? false;
      const input = { ...flagInput(spec.flags, all), quick };
      // Parsed before any database is started, so a wrong flag fails at once.
      const values = parseFlags(spec.flags, input, quick);
      await withBenchContext(
        flags,
        async (context) => {
          const out = await spec.run(input, context, values, all);
          await printReport(
            out.markdown,
            out.table ? docs : undefined,
            out.table ?? 'stream',
            out.docsMarkdown,
          );
        },
        (db) => spec.adjustDb?.(db, all),
        spec.database !== false,
      );
    }),
  );
  return cmd;
}
