import path from 'node:path';
import { Command } from 'commander';
import { formatScaleReport } from '../../bench/scale/formatScaleReport.js';
import { runScaleBench } from '../../bench/scale/runScaleBench.js';
import { FULL_SIZES, resolveScaleBenchOptions } from '../../bench/scale/ScaleBenchOptions.js';
import { defaultStateDir } from '../../devdb/defaultStateDir.js';
import { startLocalCluster } from '../../devdb/localCluster.js';
import { localClusterStatus } from '../../devdb/localClusterStatus.js';
import { invalidArgument } from '../../server/errors/LoaderError.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags } from '../dbOptions.js';
import { createProgress } from '../progress.js';
import { runAction } from '../runAction.js';

/** Flags of `bench scale`. */
interface BenchScaleFlags extends DbFlags {
  quick: boolean;
  sizes?: string;
  runs?: string;
  batchSize?: string;
  dataset?: string;
  outDir?: string;
}

/**
 * Adds `scale` to a `bench` command: loader peak RSS, CPU per batch and time to first batch
 * for splits of 10^4, 10^5 and 10^6 samples of 100 bytes. Prints a Markdown table and writes
 * JSON under `.state/bench/`.
 */
export function addBenchScaleCommand(bench: Command): void {
  const cmd = bench
    .command('scale')
    .description(
      'splits of 10^4, 10^5 and 10^6 samples of 100 bytes, each streamed once per run through ' +
        'a fresh loader: its peak RSS, CPU ms per batch, time to the first batch',
    )
    .option('--quick', 'well under a minute once the data exists: sizes 1000,10000, 1 run', false)
    .option('--sizes <list>', `split sizes (default ${FULL_SIZES.join(',')})`)
    .option('--runs <k>', 'runs of each size, each in a fresh loader (default 3)')
    .option('--batch-size <n>', 'samples per batch (default 256)')
    .option('--dataset <name>', 'dataset name (default bench_scale_100b, or _n<N>)')
    .option('--out-dir <dir>', 'folder of the JSON report (default .state/bench)');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchScaleFlags) => {
      const db = dbConfigFromFlags(flags);
      let dbPid: number | undefined;
      if (!flags.contactPoints && !process.env.SCYLLA_LOADER_CONTACT_POINTS) {
        const cluster = await startLocalCluster({
          stateDir: defaultStateDir(),
          log: (line) => process.stderr.write(`  ${line}\n`),
        });
        db.contactPoints = cluster.contactPoints;
        db.port = cluster.port;
        const { nodes } = await localClusterStatus(defaultStateDir());
        if (nodes.length === 1) dbPid = nodes[0]!.pid ?? undefined;
      }
      // `on`, not `once`: tsx relays a Ctrl-C as a second SIGINT, which without a listener
      // would kill the process before its children are ended.
      const abort = new AbortController();
      const onSignal = (): void => abort.abort();
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const report = await runScaleBench(
          resolveScaleBenchOptions({
            db,
            dbPid,
            stateRoot: path.dirname(defaultStateDir()),
            quick: flags.quick,
            ...(flags.sizes ? { sizes: flags.sizes.split(',').map((s) => int('--sizes', s)) } : {}),
            ...(flags.runs ? { runs: int('--runs', flags.runs) } : {}),
            ...(flags.batchSize ? { batchSize: int('--batch-size', flags.batchSize) } : {}),
            ...(flags.dataset ? { dataset: flags.dataset } : {}),
            ...(flags.outDir ? { outDir: flags.outDir } : {}),
            progress: (label, total, unit) => createProgress(label, total, { unit }),
            log: (line) => process.stderr.write(`${line}\n`),
            signal: abort.signal,
          }),
        );
        process.stdout.write(formatScaleReport(report));
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    }),
  );
}

function int(flag: string, text: string): number {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isInteger(n)) {
    throw invalidArgument(`${flag} ${JSON.stringify(text)}: expected a whole number`);
  }
  return n;
}
