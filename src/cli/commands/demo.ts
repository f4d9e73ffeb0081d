import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { Command } from 'commander';
import { z } from 'zod';
import type { TransformOptions } from '../../client/TransformOptions.js';
import { loadDevDb } from '../devOnly.js';
import {
  createSplitIdsCache,
  createDbClient,
  type DbConfig,
  datasetExists,
  datasetNamespace,
  loadSplitIds,
  readManifest,
  sampleId,
  LoaderError,
  resolveSplit,
  readDatasetInfo,
  createSplitSet,
  type SplitSetInfo,
  ensureSplitTables,
  latestSplitVersion,
  readSplitSetInfo,
} from '../../core/index.js';
import { dbConfigFromFlags, type DbFlags, dbSettingNames } from '../dbOptions.js';
import { prepareMnistWithProgress } from '../prepareMnistWithProgress.js';
import { runAction } from '../runAction.js';
import { formatInfo } from './describe.js';
import { formatSummary, runIngest } from './ingest.js';
import { type EpochFigures, streamDemo } from './streamDemo.js';

/**
 * Registers `demo`: the whole path on a real sample dataset. A local Cassandra node is started
 * (or reused) unless SCYLLA_LOADER_CONTACT_POINTS names a cluster, MNIST is written as PNG
 * files plus a manifest, ingested through the manifest path, and the dataset is described.
 */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'start a local node, ingest MNIST, make a train/val/test split, serve it and stream 2 ' +
        'epochs of train, then 1 more with a server-side transform',
    )
    .option('--dataset <name>', 'dataset name', 'mnist')
    .option('--limit <n>', 'only the first n images of each MNIST subset')
    .option(
      '--mnist-dir <dir>',
      'folder for the MNIST PNG files (default: .state/mnist in the repository)',
    )
    .action(
      runAction(async (flags: { dataset: string; limit?: string; mnistDir?: string }) => {
        const demoStarted = performance.now();
        const limit =
          flags.limit === undefined ? undefined : z.coerce.number().int().min(1).parse(flags.limit);
        // The database every step uses: SCYLLA_LOADER_CONTACT_POINTS, or the local node wherever
        // it listens (a ring made with --first-address is not on 127.0.0.1).
        let dbFlags: DbFlags = {};
        if (!process.env.SCYLLA_LOADER_CONTACT_POINTS) {
          step('starting (or reusing) the local Cassandra node');
          const dbStarted = performance.now();
          const { defaultStateDir, startLocalCluster } = await loadDevDb();
          const cluster = await startLocalCluster({
            stateDir: defaultStateDir(),
            log: (line) => process.stderr.write(`  ${line}\n`),
          });
          step(
            `database ${cluster.reused ? 'reused' : 'started'} at ` +
              `${cluster.contactPoints.join(',')}:${cluster.port} in ${seconds(dbStarted)} ` +
              `(log: ${cluster.logFiles[0]})`,
          );
          dbFlags = {
            contactPoints: cluster.contactPoints.join(','),
            port: String(cluster.port),
            localDc: cluster.localDataCenter,
          };
        }
        const db = dbConfigFromFlags(dbFlags);

        const mnistDir = path.resolve(
          flags.mnistDir ??
            path.join(
              // The repository's .state/, beside the local node's folder.
              path.dirname((await loadDevDb('give --mnist-dir')).defaultStateDir()),
              flags.limit ? `mnist-${flags.limit}` : 'mnist',
            ),
        );
        step(`preparing MNIST as PNG files in ${mnistDir}`);
        let t0 = performance.now();
        const prepared = await prepareMnistWithProgress({
          outDir: mnistDir,
          ...(limit ? { limit } : {}),
        });
        process.stdout.write(
          prepared.reused
            ? `  already prepared: ${prepared.images} images\n`
            : `  wrote ${prepared.written} PNG files (${prepared.images - prepared.written} ` +
                `already there) in ${seconds(t0)}\n`,
        );

        step(`ingesting ${prepared.manifest} into dataset ${flags.dataset}`);
        t0 = performance.now();
        const missing = await samplesToIngest(db, flags.dataset, prepared.manifest);
        if (missing === 0) {
          process.stdout.write(
            `  every sample of the manifest is already in dataset ${flags.dataset} ` +
              `(checked in ${seconds(t0)}): nothing to ingest\n`,
          );
        } else {
          const summary = await runIngest(flags.dataset, {
            ...dbFlags,
            manifest: prepared.manifest,
            column: [],
            quality: '90',
            concurrency: '128',
            strict: false,
            replication: 'simple:1',
          });
          process.stdout.write(formatSummary(flags.dataset, summary));
        }

        step('what the database holds');
        const client = await createDbClient(db, { settingNames: dbSettingNames() });
        let set: SplitSetInfo;
        let splitIds: Buffer;
        const split = (set: SplitSetInfo, part = 'train'): string =>
          `${set.name}@${set.version}/${part}`;
        try {
          process.stdout.write(formatInfo(await readDatasetInfo(client, flags.dataset)));
          set = await demoSplitSet(client, flags.dataset);
          // The stream is checked against the split as the database holds it.
          // Each part read once: a cache as large as a part is all this needs.
          const cache = createSplitIdsCache(2 ** 31);
          splitIds = (await resolveSplit(client, cache, flags.dataset, split(set))).ids;
        } finally {
          await client.shutdown();
        }

        step(
          `serving ${flags.dataset} from a loader process (serve) and streaming 2 epochs of ` +
            `${split(set)} (${splitIds.length / 16} samples) through the client SDK, then 1 more ` +
            'with a server-side transform',
        );
        t0 = performance.now();
        const epochs = await streamDemo({
          db,
          dataset: flags.dataset,
          split: split(set),
          splitIds,
          epochs: 2,
          transformed: {
            transform: DEMO_TRANSFORM,
            tensorShape: DEMO_TENSOR,
            split: split(set),
            splitIds,
          },
          batchSize: 256,
          log: (line) => process.stdout.write(`  ${line}\n`),
          onEpoch: (e) => process.stdout.write(formatEpoch(e)),
        });
        process.stdout.write(`  loader started, streamed and stopped in ${seconds(t0)}\n`);
        if (
          epochs.length !== 3 ||
          !epochs.every((e) => e.exactlyOnce && e.tensorsAsAsked !== false)
        ) {
          throw new LoaderError(
            'DATA_LOSS',
            'an epoch did not deliver every sample exactly once, or a batch of the transformed ' +
              'epoch was not the tensor asked for; see the figures above',
          );
        }
        step(`demo finished in ${seconds(demoStarted)}`);
      }),
    );
}

/**
 * The transformed epoch's transform, suited to MNIST's 28 x 28 grey PNGs: grey, a random crop
 * of 80-100% of the area resized back to 28 x 28, sent raw (one uint8 tensor per batch).
 */
const DEMO_TRANSFORM: TransformOptions = {
  channels: 1,
  randomResizedCrop: { height: 28, width: 28, scale: [0.8, 1] },
  output: 'raw',
};
/** Height, width and channels of each sample of {@link DEMO_TRANSFORM}'s tensors. */
const DEMO_TENSOR = [28, 28, 1] as const;

/** One epoch's line: rates as the client measured them, and what was checked. */
function formatEpoch(e: EpochFigures): string {
  const rates =
    `  epoch ${e.epoch}: ${e.samples} samples in ${e.seconds.toFixed(2)} s, ` +
    `${(e.samples / e.seconds).toFixed(0)} samples/s, `;
  const once = `every sample exactly once: ${e.exactlyOnce ? 'yes' : 'NO'}`;
  if (e.tensorsAsAsked === undefined) {
    return (
      rates +
      `${(e.bytes / 1e6 / e.seconds).toFixed(1)} MB/s (client-side, as bench stream ` +
      `measures), ${once}\n`
    );
  }
  const shape = `[n, ${DEMO_TENSOR.join(', ')}]`;
  return (
    rates +
    `${(e.bytes / 1e6 / e.seconds).toFixed(1)} MB/s of tensor bytes (server-side decoded and ` +
    `cropped tensors, measured client-side), ${once}, every batch a uint8 ${shape} tensor: ` +
    `${e.tensorsAsAsked ? 'yes' : 'NO'}\n`
  );
}

/**
 * The demo's split set `main`: train/val/test 8:1:1 with every digit equally represented,
 * made once (split sets never change) and reused by later runs.
 */
async function demoSplitSet(client: cassandra.Client, dataset: string): Promise<SplitSetInfo> {
  await ensureSplitTables(client, dataset);
  if ((await latestSplitVersion(client, dataset, 'main')) > 0) {
    const set = await readSplitSetInfo(client, dataset, 'main');
    step(`reusing split set main@${set.version}`);
    return set;
  }
  step('making split set main: train=8,val=1,test=1, balanced classes');
  const t0 = performance.now();
  const set = await createSplitSet(client, {
    dataset,
    name: 'main',
    parts: [
      ['train', 8],
      ['val', 1],
      ['test', 1],
    ],
    folds: 0,
    groupBy: [],
    classTargets: { mode: 'balanced' },
    filters: [],
    seed: 42n,
    newVersion: false,
    allowShortfall: false,
  });
  process.stdout.write(
    `  made in ${seconds(t0)}: ` +
      set.parts.map((p) => `${p.name} ${p.size}`).join(', ') +
      ` (worst deviation from targets ${(100 * set.worstDeviation).toFixed(2)}%)\n`,
  );
  return set;
}

/**
 * How many of the manifest's samples the dataset lacks (all of them when it does not exist).
 * A repeated demo finds them all there: one scan of the dataset's ids answers that in about a
 * second, where ingest would look each sample up in turn.
 */
async function samplesToIngest(db: DbConfig, dataset: string, manifest: string): Promise<number> {
  const source = await readManifest(manifest);
  const client = await createDbClient(db, { settingNames: dbSettingNames() });
  try {
    if (!(await datasetExists(client, dataset))) return source.entries.length;
    const held = await loadSplitIds(client, dataset);
    const present = new Set<string>();
    for (let i = 0; i < held.ids.length; i += 16) present.add(held.ids.toString('hex', i, i + 16));
    const ns = datasetNamespace(dataset);
    return source.entries.filter((e) => !present.has(sampleId(e.sourceKey, ns).replaceAll('-', '')))
      .length;
  } finally {
    await client.shutdown();
  }
}

/** Seconds since `t0` (a `performance.now()` reading), for the step lines. */
function seconds(t0: number): string {
  return `${((performance.now() - t0) / 1000).toFixed(1)} s`;
}

function step(text: string): void {
  process.stdout.write(`==> ${text}\n`);
}
