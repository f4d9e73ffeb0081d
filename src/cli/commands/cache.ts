import { Command } from 'commander';
import {
  SampleCache,
  cacheScope,
  createDbClient,
  createLoaderMetrics,
  invalidArgument,
  createSplitIdsCache,
  readDatasetGeneration,
  resolveSplit,
  validateIdentifier,
  warmCache,
} from '../../core/index.js';
import { serverConfigSchema } from '../../server/config/serverConfig.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags, dbSettingNames } from '../dbOptions.js';
import { createProgress } from '../progress.js';
import { runAction } from '../runAction.js';
import { schemaFacts } from '../settings/schemaFacts.js';
import { SERVE_SETTINGS, serveSettingNames } from '../settings/serveSettings.js';
import {
  addSettingOptions,
  type FlagValues,
  parseSettings,
  rawFromFlags,
} from '../settings/settingOptions.js';

/** The settings of the disk tier, as `serve` declares them (same flags, same variables). */
const DISK_SETTINGS = SERVE_SETTINGS.filter(
  (s) => s.field === 'cacheDir' || s.field === 'cacheDiskBytes',
);

/** Registers `cache warm <dataset> <split>`: fills a host's disk cache before a job starts. */
export function registerCacheCommand(program: Command): void {
  const cache = program.command('cache').description("the host's sample cache");
  const warm = cache
    .command('warm')
    .description(
      "read a split into this host's disk cache (the folder serve --cache-dir names), so a " +
        "job's first epoch reads nothing from the database",
    )
    .argument('<dataset>', 'dataset name')
    .argument('<split>', 'split to read: all, set/part, set@version/part')
    .option('--concurrency <n>', 'reads in flight', '256');
  addSettingOptions(warm, DISK_SETTINGS, schemaFacts(serverConfigSchema));
  addDbOptions(warm).action(
    runAction(
      async (
        dataset: string,
        splitName: string,
        flags: DbFlags & FlagValues & { concurrency: string },
      ) => {
        validateIdentifier(dataset, 'dataset');
        const settings = parseSettings('cache warm settings', DISK_SETTINGS, () =>
          serverConfigSchema
            .pick({ cacheDir: true, cacheDiskBytes: true })
            .parse(rawFromFlags(DISK_SETTINGS, flags)),
        );
        if (settings.cacheDir === undefined) {
          throw invalidArgument(
            'cache warm needs the disk cache folder: --cache-dir <path> or ' +
              'SCYLLA_LOADER_CACHE_DIR (the one serve uses on this host)',
          );
        }
        const concurrency = Number(flags.concurrency);
        if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 4096) {
          throw new Error(
            `--concurrency must be a whole number from 1 to 4096, not ${flags.concurrency}`,
          );
        }
        const metrics = createLoaderMetrics();
        let diskFailure: unknown;
        const store = SampleCache.open(
          {
            cacheMemoryBytes: 0,
            cacheDir: settings.cacheDir,
            cacheDiskBytes: settings.cacheDiskBytes,
            settingNames: serveSettingNames(),
          },
          metrics,
          (err) => {
            diskFailure ??= err;
          },
        )!;
        const client = await createDbClient(dbConfigFromFlags(flags), {
          settingNames: dbSettingNames(),
        });
        try {
          const split = await resolveSplit(
            client,
            createSplitIdsCache(1 << 30),
            dataset,
            splitName,
          );
          const generation = await readDatasetGeneration(client, dataset);
          if (generation === undefined) {
            throw invalidArgument(
              `dataset ${dataset} has no info row; ingest it again before warming`,
            );
          }
          const progress = createProgress(`warm ${dataset} ${splitName}`, split.count);
          const summary = await warmCache({
            dataset,
            split,
            scope: cacheScope(dataset, generation),
            cache: store,
            paths: [{ name: 'primary', client }],
            metrics,
            concurrency,
            onProgress: (samples, bytes) => progress.update(samples, bytes),
          });
          progress.stop();
          if (diskFailure !== undefined) {
            throw invalidArgument(
              `the disk cache in ${settings.cacheDir} failed while warming ` +
                `(${(diskFailure as Error).message}); what was written before stays cached`,
              diskFailure,
            );
          }
          const dropped = (await metrics.cacheWritesDropped.get()).values[0]?.value ?? 0;
          process.stdout.write(
            `warmed ${summary.samples} samples of ${dataset} ${splitName} ` +
              `(${(summary.bytes / 1e6).toFixed(1)} MB) into ${settings.cacheDir} in ` +
              `${summary.seconds.toFixed(1)} s: ${summary.read} read from the database, ` +
              `${summary.samples - summary.read} there already` +
              (dropped > 0 ? `, ${dropped} not kept (the disk did not keep up)` : '') +
              '\n',
          );
          if (summary.bytes > settings.cacheDiskBytes / 2) {
            process.stderr.write(
              `warning: the split (${(summary.bytes / 1e6).toFixed(0)} MB) is more than the disk ` +
                `tier keeps of --cache-disk-bytes ${settings.cacheDiskBytes}; once full, it keeps ` +
                'one read in ten, so only part of the split stays cached\n',
            );
          }
        } finally {
          await client.shutdown();
          await store.close();
        }
      },
    ),
  );
}
