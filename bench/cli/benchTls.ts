import type { Command } from 'commander';
import { formatTlsReport } from '../tls/formatTlsReport.js';
import { runTlsBench } from '../tls/runTlsBench.js';
import { resolveTlsBenchOptions, TLS_BENCH_QUICK, TLS_FLAGS } from '../tls/TlsBenchOptions.js';
import { TLS_LEG_NAMES, type TlsLegName } from '../tls/tlsLegs.js';
import { addBenchCommand } from './addBenchCommand.js';
import { names, parseValue } from './benchOptions.js';

/**
 * Adds `tls` to a `bench` command: issue 15's throughput and loader CPU per GB with TLS on the
 * gRPC leg, on the database leg, on both, and with mTLS + a token, against plaintext, legs
 * interleaved, on a database node of the benchmark's own that takes TLS and plaintext on one
 * port. Prints a Markdown table and each leg's ratio to plaintext beside the goal; writes JSON
 * under `.state/bench/`.
 */
export function addBenchTlsCommand(bench: Command): void {
  addBenchCommand(bench, {
    name: 'tls',
    description:
      'MB/s, samples/s and loader CPU seconds per GB streaming imagenet-size photos with TLS ' +
      'on the gRPC leg, the database leg, both, and mTLS + token, against plaintext; legs ' +
      'interleaved, one database node of its own (TLS optional on its CQL port)',
    quick: `CI-sized: ${TLS_BENCH_QUICK.samples} samples, ${TLS_BENCH_QUICK.runs} run`,
    flags: TLS_FLAGS,
    docs: true,
    database: false,
    run: async (input, context) => {
      const report = await runTlsBench(resolveTlsBenchOptions({ ...context, ...input }));
      return { markdown: formatTlsReport(report), table: 'tls' };
    },
  });
}

/** `--legs a,b` as leg names, or INVALID_ARGUMENT naming the known ones. */
export function tlsLegsFlag(list: string): TlsLegName[] {
  return parseValue(names('--legs', TLS_LEG_NAMES, 'leg'), list);
}
