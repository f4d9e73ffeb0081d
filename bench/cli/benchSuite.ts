import path from 'node:path';
import { Command } from 'commander';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { rerenderBenchSuite, runBenchSuite, SUITE_PARTS } from '../suite/runBenchSuite.js';
import { suiteDocTables, targetsTable } from '../suite/formatSuiteReport.js';
import { assertCommittedTree, measuredHere, writeDocTables } from '../report/docTables.js';
import { addFlags, DOCS_FLAG, names, parseValue } from './benchOptions.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags, runAction } from '../../src/cli/index.js';

/** Flags of `bench suite`. */
export interface BenchSuiteFlags extends DbFlags {
  quick: boolean;
  parts?: string;
  outDir?: string;
  from?: string;
  docs?: string;
}

/**
 * Adds `suite` to a `bench` command: every scenario of the benchmark suite in one invocation,
 * with the targets checked, written to a results folder (JSON, Markdown, SVG chart).
 */
export function addBenchSuiteCommand(bench: Command): void {
  const cmd = bench
    .command('suite')
    .description(
      'the whole benchmark suite in one run: G (gRPC leg ceiling), A-C (tight loop, in-order, ' +
        'out-of-order; pinned and unpinned), D (injected latency, congested route), F ' +
        '(concurrent ranks), E (split size vs memory); writes suite.json, suite.md and ' +
        'latency.svg to a results folder and prints the targets',
    )
    .option('--quick', 'every part small and once: a few minutes (the test command runs it)', false)
    .option('--parts <list>', `parts to run (default all: ${SUITE_PARTS.join(',')})`)
    .option('--out-dir <dir>', 'results folder (default bench-results/<time>[-quick])')
    .option(
      '--from <suite.json>',
      'run nothing: judge the targets again and rewrite suite.json and suite.md of a results folder',
    );
  addFlags(cmd, DOCS_FLAG);
  addDbOptions(cmd).action(
    runAction(async (flags: BenchSuiteFlags) => {
      if (flags.docs) assertCommittedTree(flags.docs);
      if (flags.from) {
        const report = await rerenderBenchSuite(path.resolve(flags.from));
        if (flags.docs) {
          // Measured when and by what the folder says, on the machine it describes.
          const env = report.environment;
          await writeDocTables(flags.docs, suiteDocTables(report), {
            ...measuredHere(report.command),
            date: new Date(report.startedAt),
            commit: 'unknown (from a results folder)',
            machine: `${env.cpuModel}, ${env.cores} cores, ${env.memoryGiB} GiB, Node ${env.node}`,
          });
        }
        process.stdout.write(
          ['', ...targetsTable(report.targets), '', `rewrote: ${report.files.markdown}`, ''].join(
            '\n',
          ),
        );
        return;
      }
      const parts = flags.parts
        ? parseValue(names('--parts', SUITE_PARTS, 'part'), flags.parts)
        : undefined;
      await withBenchContext(flags, async (context) => {
        const stamp = new Date().toISOString().replace(/[:.]/g, '-');
        const outDir = path.resolve(
          flags.outDir ??
            path.join(
              path.dirname(context.stateRoot),
              'bench-results',
              `${stamp}${flags.quick ? '-quick' : ''}`,
            ),
        );
        const report = await runBenchSuite({
          ...context,
          toxiproxy: toxiproxyBinary(),
          quick: flags.quick,
          ...(parts ? { parts } : {}),
          outDir,
        });
        if (flags.docs) await writeDocTables(flags.docs, suiteDocTables(report));
        process.stdout.write(
          [
            '',
            ...targetsTable(report.targets),
            '',
            `results: ${outDir} (suite.md, suite.json${report.files.chart ? ', latency.svg' : ''})`,
            '',
          ].join('\n'),
        );
      });
    }),
  );
}
