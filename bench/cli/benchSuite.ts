import path from 'node:path';
import { Command } from 'commander';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import {
  rerenderBenchSuite,
  runBenchSuite,
  SUITE_PARTS,
  type SuitePart,
} from '../suite/runBenchSuite.js';
import { targetsTable } from '../suite/formatSuiteReport.js';
import { invalidArgument } from '../../src/core/index.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench suite`. */
export interface BenchSuiteFlags extends DbFlags {
  quick: boolean;
  parts?: string;
  outDir?: string;
  from?: string;
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
  addDbOptions(cmd).action(
    runAction(async (flags: BenchSuiteFlags) => {
      if (flags.from) {
        const report = await rerenderBenchSuite(path.resolve(flags.from));
        process.stdout.write(
          ['', ...targetsTable(report.targets), '', `rewrote: ${report.files.markdown}`, ''].join(
            '\n',
          ),
        );
        return;
      }
      const parts = flags.parts ? parseParts(flags.parts) : undefined;
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

function parseParts(text: string): SuitePart[] {
  const parts = text.split(',').map((p) => p.trim());
  for (const p of parts) {
    if (!(SUITE_PARTS as readonly string[]).includes(p)) {
      throw invalidArgument(`--parts ${text}: each part is one of ${SUITE_PARTS.join(', ')}`);
    }
  }
  return parts as SuitePart[];
}
