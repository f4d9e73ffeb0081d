import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { Command } from 'commander';
import { prepareMnist } from '../../datasets/prepareMnist.js';
import { defaultStateDir } from '../../devdb/defaultStateDir.js';
import { startLocalCluster } from '../../devdb/localCluster.js';
import {
  createDbClient,
  LoaderError,
  readDatasetInfo,
  createSplitSet,
  type SplitSetInfo,
  ensureSplitTables,
  latestSplitVersion,
  readSplitSetInfo,
} from '../../core/index.js';
import { dbConfigFromFlags } from '../dbOptions.js';
import { createProgress, type Progress } from '../progress.js';
import { runAction } from '../runAction.js';
import { formatInfo } from './describe.js';
import { formatSummary, runIngest } from './ingest.js';
import { streamDemo } from './streamDemo.js';

/**
 * Registers `demo`: the whole path on a real sample dataset. A local Cassandra node is started
 * (or reused) unless SCYLLA_LOADER_CONTACT_POINTS names a cluster, MNIST is written as PNG
 * files plus a manifest, ingested through the manifest path, and the dataset is described.
 */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'start a local node, ingest MNIST, make a train/val/test split, serve it and stream 2 epochs',
    )
    .option('--dataset <name>', 'dataset name', 'mnist')
    .option('--limit <n>', 'only the first n images of each MNIST subset')
    .action(
      runAction(async (flags: { dataset: string; limit?: string }) => {
        const stateDir = path.dirname(defaultStateDir());
        if (!process.env.SCYLLA_LOADER_CONTACT_POINTS) {
          step('starting (or reusing) the local Cassandra node');
          const t0 = performance.now();
          const cluster = await startLocalCluster({
            stateDir: defaultStateDir(),
            log: (line) => process.stderr.write(`  ${line}\n`),
          });
          step(
            `database ${cluster.reused ? 'reused' : 'started'} at ` +
              `${cluster.contactPoints.join(',')}:${cluster.port} in ` +
              `${((performance.now() - t0) / 1000).toFixed(1)} s (log: ${cluster.logFiles[0]})`,
          );
        }

        const mnistDir = path.join(stateDir, flags.limit ? `mnist-${flags.limit}` : 'mnist');
        step(`preparing MNIST as PNG files in ${mnistDir}`);
        let progress: Progress | undefined;
        const prepared = await prepareMnist({
          outDir: mnistDir,
          ...(flags.limit ? { limit: Number(flags.limit) } : {}),
          onProgress: (done, total) => {
            progress ??= createProgress('prepare mnist', total, { unit: 'images' });
            progress.update(done);
          },
        });
        progress?.stop();

        step(`ingesting ${prepared.manifest} into dataset ${flags.dataset}`);
        const summary = await runIngest(flags.dataset, {
          manifest: prepared.manifest,
          column: [],
          quality: '90',
          concurrency: '128',
          strict: false,
          replication: 'simple:1',
        });
        process.stdout.write(formatSummary(flags.dataset, summary));

        step('what the database holds');
        const client = await createDbClient(dbConfigFromFlags({}));
        let set: SplitSetInfo;
        try {
          process.stdout.write(formatInfo(await readDatasetInfo(client, flags.dataset)));
          set = await demoSplitSet(client, flags.dataset);
        } finally {
          await client.shutdown();
        }
        const train = set.parts.find((p) => p.name === 'train')!;

        const split = `${set.name}@${set.version}/train`;
        step(`serving ${flags.dataset} and streaming 2 epochs of ${split} through the client SDK`);
        const epochs = await streamDemo({
          db: dbConfigFromFlags({}),
          dataset: flags.dataset,
          split,
          sampleCount: train.size,
          epochs: 2,
          batchSize: 256,
          onEpoch: (e) =>
            process.stdout.write(
              `  epoch ${e.epoch}: ${e.samples} samples in ${e.seconds.toFixed(2)} s, ` +
                `${(e.samples / e.seconds).toFixed(0)} samples/s, ` +
                `${(e.bytes / 1e6 / e.seconds).toFixed(1)} MB/s, ` +
                `every sample exactly once: ${e.exactlyOnce ? 'yes' : 'NO'}\n`,
            ),
        });
        if (epochs.length !== 2 || !epochs.every((e) => e.exactlyOnce)) {
          throw new LoaderError(
            'DATA_LOSS',
            'an epoch did not deliver every sample exactly once; see the figures above',
          );
        }
      }),
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
    `  made in ${((performance.now() - t0) / 1000).toFixed(1)} s: ` +
      set.parts.map((p) => `${p.name} ${p.size}`).join(', ') +
      ` (worst deviation from targets ${(100 * set.worstDeviation).toFixed(2)}%)\n`,
  );
  return set;
}

function step(text: string): void {
  process.stdout.write(`==> ${text}\n`);
}
