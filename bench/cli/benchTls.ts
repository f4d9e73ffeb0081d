import path from 'node:path';
import { Command } from 'commander';
import { invalidArgument } from '../../src/core/index.js';
import { defaultStateDir } from '../../src/devdb/defaultStateDir.js';
import { createProgress } from '../../src/cli/progress.js';
import { runAction } from '../../src/cli/runAction.js';
import { formatTlsReport } from '../tls/formatTlsReport.js';
import { runTlsBench } from '../tls/runTlsBench.js';
import {
  resolveTlsBenchOptions,
  TLS_BENCH_DEFAULTS,
  TLS_BENCH_QUICK,
} from '../tls/TlsBenchOptions.js';
import { TLS_LEG_NAMES, type TlsLegName } from '../tls/tlsLegs.js';
import { wholeNumberFlag } from './benchFlags.js';

/** Flags of `bench tls`. */
export interface BenchTlsFlags {
  quick: boolean;
  samples?: string;
  batchSize?: string;
  runs?: string;
  legs?: string;
  dataset?: string;
  nodeDir?: string;
  nodeAddress?: string;
  nodeHeap?: string;
}

/**
 * Adds `tls` to a `bench` command: issue 15's throughput and loader CPU per GB with TLS on the
 * gRPC leg, on the database leg, on both, and with mTLS + a token, against plaintext, legs
 * interleaved, on a database node of the benchmark's own that takes TLS and plaintext on one
 * port. Prints a Markdown table and each leg's ratio to plaintext beside the goal; writes JSON
 * under `.state/bench/`.
 */
export function addBenchTlsCommand(bench: Command): void {
  const d = TLS_BENCH_DEFAULTS;
  bench
    .command('tls')
    .description(
      'MB/s, samples/s and loader CPU seconds per GB streaming imagenet-size photos with TLS ' +
        'on the gRPC leg, the database leg, both, and mTLS + token, against plaintext; legs ' +
        'interleaved, one database node of its own (TLS optional on its CQL port)',
    )
    .option(
      '--quick',
      `CI-sized: ${TLS_BENCH_QUICK.samples} samples, ${TLS_BENCH_QUICK.runs} run`,
      false,
    )
    .option('--samples <n>', `distinct ~104 kB photo JPEGs in the dataset (default ${d.samples})`)
    .option('--batch-size <n>', `samples per batch (default ${d.batchSize})`)
    .option('--runs <k>', `runs of every leg, interleaved; medians reported (default ${d.runs})`)
    .option(
      '--legs <list>',
      `a subset of: ${TLS_LEG_NAMES.join(', ')} (default all; plaintext always runs)`,
    )
    .option('--dataset <name>', 'dataset name (default that of bench stream for --samples)')
    .option(
      '--node-dir <dir>',
      "state folder of the benchmark's database node, kept running for the next run " +
        '(default: a temporary folder, the node stopped and removed at the end)',
    )
    .option('--node-address <ip>', `loopback address of that node (default ${d.nodeAddress})`)
    .option('--node-heap <MiB>', `heap of that node (default ${d.nodeHeapMb})`)
    .action(
      runAction(async (flags: BenchTlsFlags) => {
        const options = resolveTlsBenchOptions({
          stateRoot: path.dirname(defaultStateDir()),
          quick: flags.quick,
          ...(flags.samples ? { samples: wholeNumberFlag('--samples', flags.samples) } : {}),
          ...(flags.batchSize
            ? { batchSize: wholeNumberFlag('--batch-size', flags.batchSize) }
            : {}),
          ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs) } : {}),
          ...(flags.legs ? { legs: tlsLegsFlag(flags.legs) } : {}),
          ...(flags.dataset ? { dataset: flags.dataset } : {}),
          ...(flags.nodeDir ? { nodeDir: path.resolve(flags.nodeDir) } : {}),
          ...(flags.nodeAddress ? { nodeAddress: flags.nodeAddress } : {}),
          ...(flags.nodeHeap ? { nodeHeapMb: wholeNumberFlag('--node-heap', flags.nodeHeap) } : {}),
          progress: (label, total, unit) => createProgress(label, total, { unit }),
          log: (line) => process.stderr.write(`${line}\n`),
        });
        // `on`, not `once`: tsx relays a Ctrl-C as a second SIGINT, which without a listener
        // would kill the process before its children and node are ended.
        const abort = new AbortController();
        const onSignal = (): void => abort.abort();
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        try {
          const report = await runTlsBench({ ...options, signal: abort.signal });
          process.stdout.write(formatTlsReport(report));
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      }),
    );
}

/** `--legs a,b` as leg names, or INVALID_ARGUMENT naming the known ones. */
export function tlsLegsFlag(text: string): TlsLegName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const known = new Set<string>(TLS_LEG_NAMES);
  const bad = names.filter((n) => !known.has(n));
  if (names.length === 0 || bad.length > 0) {
    throw invalidArgument(
      `--legs ${JSON.stringify(text)}: use a comma-separated subset of ${TLS_LEG_NAMES.join(', ')}`,
    );
  }
  return [...new Set(names)] as TlsLegName[];
}
