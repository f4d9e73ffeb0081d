import { Command, Option } from 'commander';
import { runStreamBench } from '../stream/runStreamBench.js';
import { formatStreamReport } from '../stream/formatStreamReport.js';
import { dropStreamDataset } from '../stream/prepareStreamDataset.js';
import {
  DEFAULT_CONCURRENCIES,
  resolveStreamBenchOptions,
} from '../stream/resolveStreamBenchOptions.js';
import { defaultDatasetName } from '../stream/StreamBenchOptions.js';
import { PHOTO_PRESET_NAMES, type PhotoPresetName } from '../../src/datasets/photos/PhotoPreset.js';
import { createDbClient, type DbConfig } from '../../src/core/index.js';
import { placementsFlag, wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench stream`. */
export interface BenchStreamFlags extends DbFlags {
  quick: boolean;
  pin: boolean;
  samples?: string;
  payload: string;
  runs?: string;
  concurrency?: string;
  batchSize: string;
  placements?: string;
  dataset?: string;
  connectionsPerHost?: string;
  layoutIterations?: string;
  groupReads?: string;
  drop: boolean;
}

/**
 * Adds `stream` to a `bench` command: the streaming throughput benchmark (service and SDK
 * against a tight loop on the same driver, unpinned and pinned), plus the batch-layout
 * micro-benchmark. Prints a Markdown table and writes JSON under `.state/bench/`.
 */
export function addBenchStreamCommand(bench: Command): void {
  const cmd = bench
    .command('stream')
    .description(
      'throughput of photo samples (~104 kB, or 224x224 ~15 kB) through the loader and the ' +
        'SDK versus a tight loop on the same driver, unpinned and with the database pinned to ' +
        'one core and the loader and client to another; plus the batch-layout encode/decode ' +
        'micro-benchmark',
    )
    .option('--quick', 'about a minute: 300 samples, 1 run, C=128, unpinned only', false)
    .option('--pin', 'with --quick: run the pinned placement too', false)
    .option(
      '--samples <n>',
      'distinct JPEGs cropped from real photos in the dataset (default 3000)',
    )
    .addOption(
      new Option(
        '--payload <preset>',
        'sample size: imagenet (~104 kB), small (224x224, ~15 kB) or tiny (32x32, ~500 B)',
      )
        .choices(PHOTO_PRESET_NAMES)
        .default('imagenet'),
    )
    .option('--runs <k>', 'timed runs of each scenario, interleaved (default 3)')
    .option(
      '--concurrency <list>',
      `tight-loop reads in flight to calibrate over, best kept (default ${DEFAULT_CONCURRENCIES.join(',')})`,
    )
    .option('--batch-size <n>', 'samples per batch', '128')
    .option('--placements <list>', 'unpinned, pinned or unpinned,pinned (default both)')
    .option('--dataset <name>', 'dataset name (default bench_photo_<payload>_n<N>)')
    .addOption(
      new Option(
        '--connections-per-host <n>',
        'driver connections per host, for the loader and the tight loop alike',
      ).env('SCYLLA_LOADER_CONNECTIONS_PER_HOST'),
    )
    .option('--layout-iterations <n>', 'iterations per layout of the micro-benchmark')
    .option(
      '--group-reads <n>',
      'also run the tight loop and the service reading n samples per query, grouped by ' +
        'replica (the plain service rows then read one row per sample)',
    )
    .option('--drop', 'drop the benchmark dataset (of --samples / --dataset) and exit', false);
  addDbOptions(cmd).action(
    runAction(async (flags: BenchStreamFlags) => {
      const adjustDb = (db: DbConfig): void => {
        if (flags.connectionsPerHost !== undefined) {
          db.connectionsPerHost = wholeNumberFlag(
            '--connections-per-host',
            flags.connectionsPerHost,
          );
        }
      };
      const db = dbConfigFromFlags(flags);
      adjustDb(db);
      const payload = flags.payload as PhotoPresetName;
      if (flags.drop) {
        const samples = flags.samples
          ? wholeNumberFlag('--samples', flags.samples)
          : flags.quick
            ? 300
            : 3000;
        const name = flags.dataset ?? defaultDatasetName(samples, payload);
        const client = await createDbClient(db);
        try {
          const existed = await dropStreamDataset(client, name);
          process.stdout.write(`${existed ? 'dropped' : 'no'} dataset ${name}\n`);
        } finally {
          await client.shutdown();
        }
        return;
      }

      await withBenchContext(
        flags,
        async (context) => {
          const report = await runStreamBench(
            resolveStreamBenchOptions({
              ...context,
              quick: flags.quick,
              pin: flags.pin,
              payload,
              ...(flags.samples ? { samples: wholeNumberFlag('--samples', flags.samples) } : {}),
              ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs) } : {}),
              ...(flags.concurrency
                ? {
                    concurrencies: flags.concurrency
                      .split(',')
                      .map((c) => wholeNumberFlag('--concurrency', c)),
                  }
                : {}),
              batchSize: wholeNumberFlag('--batch-size', flags.batchSize),
              ...(flags.placements ? { placements: placementsFlag(flags.placements) } : {}),
              ...(flags.dataset ? { dataset: flags.dataset } : {}),
              ...(flags.groupReads
                ? { groupReads: wholeNumberFlag('--group-reads', flags.groupReads) }
                : {}),
              ...(flags.layoutIterations
                ? {
                    layoutIterations: wholeNumberFlag(
                      '--layout-iterations',
                      flags.layoutIterations,
                    ),
                  }
                : {}),
            }),
          );
          process.stdout.write(formatStreamReport(report));
        },
        adjustDb,
      );
    }),
  );
}
