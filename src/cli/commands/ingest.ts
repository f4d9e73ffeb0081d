import { Command, Option } from 'commander';
import { z } from 'zod';
import {
  createDbClient,
  invalidArgument,
  ingestDataset,
  type IngestSummary,
  type IngestSource,
  type PreprocessOptions,
  openIngestFormat,
  parseShard,
  isColumnType,
  type ColumnType,
  validateIdentifier,
  parseReplication,
} from '../../core/index.js';
import {
  addDbOptions,
  consistencySettingNames,
  dbConfigFromFlags,
  dbSettingNames,
} from '../dbOptions.js';
import { addIngestCapOptions, ingestCapsFromFlags } from '../settings/ingestCapSettings.js';
import type { FlagValues } from '../settings/settingOptions.js';
import type { IngestFlags } from './ingestFlags.js';
import { createProgress } from '../progress.js';
import { runAction } from '../runAction.js';
import { reportToParent, runIngestWorkers, toWire, workerChildFlags } from './ingestWorkers.js';
import {
  addFormatInputOptions,
  addFormatOptions,
  formatOptionValues,
  formatTitles,
  givenFormat,
  ingestFlagOf,
} from './ingestFormatOptions.js';

const positiveInt = (what: string, max: number) =>
  z.coerce
    .number()
    .int()
    .min(1, `${what} must be at least 1`)
    .max(max, `${what} is at most ${max}`);

/** Registers `ingest <dataset>`. */
export function registerIngestCommand(program: Command): void {
  const cmd = program
    .command('ingest')
    .description(
      `write ${formatTitles()} into a dataset ` +
        '(re-running resumes; several processes may split one source)',
    )
    .argument('<dataset>', 'dataset (keyspace) name: lower-case letters, digits, underscores');
  addFormatInputOptions(cmd);
  cmd.option(
    '--column <name:type>',
    'declare a metadata column type (text, int, bigint, double, boolean); repeatable',
    (v: string, acc: string[]) => [...acc, v],
    [] as string[],
  );
  addFormatOptions(cmd);
  cmd
    .option('--resize <px>', 'preprocess: resize the shorter side to this many pixels')
    .option('--crop <WxH>', 'preprocess: center crop, e.g. 224x224 (or 224)')
    .option('--quality <q>', 'preprocess: JPEG quality', '90')
    .addOption(
      new Option('--concurrency <n>', 'samples read and written at once (per process)')
        .default('256')
        .env('SCYLLA_LOADER_INGEST_CONCURRENCY'),
    )
    .addOption(
      new Option(
        '--group-bytes <n>',
        "data bytes of small samples written in one request (keep under the database's " +
          'batch_size_fail_threshold: Cassandra 50 KiB, ScyllaDB 1 MiB); 1 writes one by one',
      ).env('SCYLLA_LOADER_INGEST_GROUP_BYTES'),
    )
    .option('--shard <i/n>', 'ingest only part i of n of the source (run n processes, i = 0..n-1)')
    .option('--workers <n>', 'split the source over n processes of this machine', '1')
    .option('--strict', 'stop at the first bad sample (unreadable, undecodable, too big)', false)
    .option(
      '--ignore-labels',
      "store every sample without a label or label blob, whatever the source has (an image folder's files at any depth)",
    )
    .addOption(new Option('--worker-child').hideHelp())
    .addOption(
      new Option(
        '--replication <spec>',
        'new keyspace replication: simple:<rf> or nts:<dc>=<rf>,...',
      )
        .default('simple:1')
        .env('SCYLLA_LOADER_REPLICATION'),
    );
  addIngestCapOptions(cmd);
  addDbOptions(cmd).action(
    runAction(async (dataset: string, given: IngestFlags) => {
      const flags = given.workerChild ? workerChildFlags() : given;
      const summary = await runIngest(dataset, flags);
      if (flags.workerChild) process.send?.({ kind: 'summary', summary: toWire(summary) });
      else process.stdout.write(formatSummary(dataset, summary));
    }),
  );
}

/** Reads the source the flags name (the `--shard` part of it), through the formats' registry. */
export async function openIngestSource(flags: IngestFlags): Promise<IngestSource> {
  const { format, input } = givenFormat(flags);
  const shard = flags.shard !== undefined ? parseShard(flags.shard, '--shard') : undefined;
  const declaredTypes = parseColumns(flags.column);
  return openIngestFormat(format, input, {
    options: formatOptionValues(format, flags),
    declaredTypes,
    ...(shard ? { shard } : {}),
    nameOption: ingestFlagOf,
    ...(flags.ignoreLabels === true ? { ignoreLabels: true } : {}),
  });
}

/** Runs an ingest with a progress display; `ingest` and `demo` both use it. */
export async function runIngest(dataset: string, flags: IngestFlags): Promise<IngestSummary> {
  validateIdentifier(dataset, 'dataset');
  const concurrency = positiveInt('--concurrency', 4096).parse(flags.concurrency);
  const workers = positiveInt('--workers', 64).parse(flags.workers ?? '1');
  const groupBytes =
    flags.groupBytes !== undefined
      ? positiveInt('--group-bytes', 16 << 20).parse(flags.groupBytes)
      : undefined;
  const replication = parseReplication(flags.replication);
  const caps = ingestCapsFromFlags(flags as unknown as FlagValues);
  const preprocess = preprocessFromFlags(flags);
  if (workers > 1 && flags.shard !== undefined) {
    throw invalidArgument('give --workers or --shard, not both (--workers picks the shards)');
  }
  const source = await openIngestSource(flags);
  if (workers > 1) {
    const summary = await runIngestWorkers(dataset, flags, { source, workers, replication, caps });
    return source.unlabelled !== undefined
      ? { ...summary, unlabelled: source.unlabelled }
      : summary;
  }

  const db = dbConfigFromFlags(flags);
  const client = await createDbClient(db, { settingNames: dbSettingNames() });
  const child = flags.workerChild === true;
  const progress = child
    ? reportToParent()
    : createProgress(`ingest ${dataset}`, source.total ?? 0);
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await ingestDataset(client, {
      dataset,
      source,
      replication,
      ...(preprocess ? { preprocess } : {}),
      ...(groupBytes !== undefined ? { groupBytes } : {}),
      concurrency,
      strict: flags.strict,
      nameOption: ingestFlagOf,
      caps,
      consistency: {
        levels: {
          writeConsistency: db.writeConsistency,
          readConsistency: db.readConsistency,
          sampleReadConsistency: db.sampleReadConsistency,
        },
        settingNames: consistencySettingNames(),
      },
      refreshCounts: !child,
      ...(flags.freshDataset !== undefined ? { fresh: flags.freshDataset } : {}),
      signal: abort.signal,
      onProgress: (p) => progress.update(p.done, p.bytesWritten),
      onSkip: (s) => progress.log(`skipped ${s.path} (${s.origin}): ${s.reason}`),
    });
  } finally {
    progress.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await client.shutdown();
    if (abort.signal.aborted && !child) {
      process.stderr.write('ingest interrupted; run the same command again to resume it\n');
    }
  }
}

function preprocessFromFlags(flags: IngestFlags): PreprocessOptions | undefined {
  if (flags.resize === undefined && flags.crop === undefined) return undefined;
  const quality = positiveInt('--quality', 100).parse(flags.quality);
  const options: PreprocessOptions = { quality };
  if (flags.resize !== undefined)
    options.resizeShorter = positiveInt('--resize', 65535).parse(flags.resize);
  if (flags.crop !== undefined) {
    const m = /^(\d+)(?:x(\d+))?$/.exec(flags.crop);
    if (!m) throw invalidArgument(`--crop ${flags.crop}: use WxH (e.g. 224x224) or one number`);
    const width = Number(m[1]);
    const height = Number(m[2] ?? m[1]);
    if (width < 1 || height < 1) throw invalidArgument('--crop sizes must be at least 1');
    options.crop = { width, height };
  }
  return options;
}

function parseColumns(specs: string[]): Record<string, ColumnType> {
  const out: Record<string, ColumnType> = {};
  for (const spec of specs) {
    const [name = '', type = ''] = spec.split(':', 2);
    if (!isColumnType(type)) {
      throw invalidArgument(
        `--column ${spec}: use name:type with type one of text, int, bigint, double, boolean`,
      );
    }
    out[validateIdentifier(name, 'metadata column')] = type;
  }
  return out;
}

/** The summary printed after an ingest. */
export function formatSummary(dataset: string, s: IngestSummary): string {
  const rate = s.written / Math.max(s.seconds, 1e-3);
  const mbs = s.bytesWritten / 1e6 / Math.max(s.seconds, 1e-3);
  const lines = [
    `ingest ${dataset}: ${s.total} samples in the source, ${s.seconds.toFixed(1)} s`,
    `  written ${s.written} (${(s.bytesWritten / 1e6).toFixed(1)} MB, ${rate.toFixed(0)} samples/s, ` +
      `${mbs.toFixed(1)} MB/s), already present ${s.alreadyPresent}, skipped ${s.failed}`,
  ];
  const reasons = new Map<string, number>();
  for (const k of s.skipped) reasons.set(k.reason, (reasons.get(k.reason) ?? 0) + 1);
  for (const [reason, n] of reasons) lines.push(`  skipped ${n}: ${reason}`);
  for (const k of s.skipped.slice(0, 20)) lines.push(`    ${k.path}`);
  if (s.skipped.length > 20) lines.push(`    ... and ${s.skipped.length - 20} more`);
  if (s.unlabelled !== undefined) {
    lines.push(`  unlabelled: ${s.unlabelled}; samples are stored without a label`);
  }
  lines.push(
    `  dataset ${dataset} now holds ${s.dataset.sampleCount} samples, ` +
      `${(s.dataset.totalBytes / 1e6).toFixed(1)} MB, ${countClasses(s.dataset.classCounts)}`,
  );
  return `${lines.join('\n')}\n`;
}

/** `3 classes`, and how many samples have no label (counted under -1) when some have none. */
export function countClasses(classCounts: ReadonlyMap<number, number>): string {
  const unlabelled = classCounts.get(-1) ?? 0;
  const classes = classCounts.size - (classCounts.has(-1) ? 1 : 0);
  return `${classes} classes` + (unlabelled > 0 ? `, ${unlabelled} samples without a label` : '');
}
