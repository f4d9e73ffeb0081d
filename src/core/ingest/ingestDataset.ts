import cassandra from 'cassandra-driver';
import pMap from 'p-map';
import { DEFAULT_INGEST_CAPS, type IngestCapRules } from '../config/ingestCaps.js';
import { type ConsistencySetting, consistencyHint } from '../db/consistency.js';
import { retryableDriverError } from '../db/retryableDriverError.js';
import { invalidArgument, unavailable } from '../errors/LoaderError.js';
import { ensureDatasetSchema } from '../schema/datasetSchema.js';
import {
  recordIngestStart,
  refreshDatasetCounts,
  type DatasetCounts,
} from '../schema/datasetInfo.js';
import type { Replication } from '../schema/replication.js';
import { datasetNamespace, sampleId } from '../schema/sampleId.js';
import type { IngestEntry } from './IngestEntry.js';
import { type IngestSource, type ListedSource, refuseRepeatedKeys } from './IngestSource.js';
import { checkIngestCaps } from './checkIngestCaps.js';
import { SampleWriter } from './SampleWriter.js';
import { MAX_SAMPLE_BYTES, sampleProblem } from './sampleProblem.js';
import { SourceFileReader } from './readSourceFile.js';
import { preprocessImage, type PreprocessOptions } from './preprocessImage.js';
import { type NameOption, ownOptionName } from './nameOption.js';

/** Options of {@link ingestDataset}. */
export interface IngestOptions {
  dataset: string;
  source: IngestSource;
  replication: Replication;
  /** Re-encode images with sharp; absent: store each file's bytes unchanged. */
  preprocess?: PreprocessOptions;
  /** Samples read and written at once. */
  concurrency: number;
  /** Stop at the first bad sample (unreadable, undecodable, against the rules) instead of skipping it. */
  strict: boolean;
  /** Data bytes of small samples per request (see `SampleWriterOptions.groupBytes`). */
  groupBytes?: number;
  /** The dataset held no sample before (see `SampleWriterOptions.fresh`). */
  fresh?: boolean;
  /** Recompute the dataset's counts at the end (default true; a `--workers` child leaves it). */
  refreshCounts?: boolean;
  /** Caps on what the ingest may add to the dataset (default: {@link DEFAULT_INGEST_CAPS}). */
  caps?: IngestCapRules;
  /**
   * The consistency levels the client was made with, and how the command names their
   * settings: a failure for want of replicas then names the setting that asks for them.
   */
  consistency?: {
    levels: Record<ConsistencySetting, string>;
    settingNames: Record<ConsistencySetting, string>;
  };
  /** How messages name these options (default: as named here; the CLI gives its flags). */
  nameOption?: NameOption;
  onProgress?: (progress: IngestProgress) => void;
  /** Called once per skipped sample, as it happens. */
  onSkip?: (skip: IngestSkip) => void;
  signal?: AbortSignal;
}

/** Running figures of an ingest. */
export interface IngestProgress {
  total: number;
  done: number;
  written: number;
  alreadyPresent: number;
  failed: number;
  /** Bytes of sample data written by this run. */
  bytesWritten: number;
}

/** A sample left out, with the reason. */
export interface IngestSkip {
  origin: string;
  path: string;
  reason: string;
}

/** What an ingest did, and what the dataset holds afterwards. */
export interface IngestSummary extends IngestProgress {
  seconds: number;
  /** The first {@link MAX_LISTED_SKIPS} samples left out (all are counted in `failed`). */
  skipped: IngestSkip[];
  /** Counts after the ingest (zeros when `refreshCounts` was false). */
  dataset: DatasetCounts;
  /** The dataset held no sample at the start: no existence checks were needed. */
  fresh: boolean;
  /** Why the source counts as unlabelled (see `IngestSource.unlabelled`); absent when labelled. */
  unlabelled?: string;
}

/**
 * Writes a source's samples into a dataset, reading the source as it goes (bounded memory):
 * the schema is created if needed; a sample whose id is already present is skipped without
 * reading its file, so a re-run resumes an interrupted ingest and a repeated one changes
 * nothing; a sample the source could not make, that cannot be read or decoded, or that breaks
 * the rules of {@link sampleProblem} is reported and skipped (or stops a strict ingest). The
 * writes go through a {@link SampleWriter} (grouped by replica, data rows before metadata
 * rows). Counts are recomputed from the tables at the end.
 *
 * Errors: a user's mistake is the INVALID_ARGUMENT (or other `LoaderError`) it was
 * raised as; database trouble a later attempt can cure (`retryableDriverError`) is UNAVAILABLE,
 * saying that running the same ingest again resumes it; anything else, a bug included,
 * propagates as itself, so the server reports INTERNAL and the CLI prints the stack, instead
 * of a retry being suggested for something no retry cures.
 */
export async function ingestDataset(
  client: cassandra.Client,
  options: IngestOptions,
): Promise<IngestSummary> {
  try {
    return await ingest(client, options);
  } catch (err) {
    const trouble = retryableDriverError(err);
    if (trouble === undefined) throw err;
    const hint = options.consistency
      ? consistencyHint(err, options.consistency.levels, options.consistency.settingNames)
      : '';
    throw unavailable(
      `writing to dataset ${options.dataset} failed: ${trouble}${hint}; samples written so ` +
        'far are kept, and running the same ingest again resumes it',
      err,
    );
  }
}

async function ingest(client: cassandra.Client, options: IngestOptions): Promise<IngestSummary> {
  const { dataset, source } = options;
  const started = performance.now();
  if ('entries' in source) refuseRepeatedKeys((source as ListedSource).entries);
  const caps = options.caps ?? DEFAULT_INGEST_CAPS;
  checkIngestCaps({ dataset, columns: source.columns, labelNames: source.labelNames }, caps);
  await ensureDatasetSchema(client, {
    dataset,
    replication: options.replication,
    columns: source.columns,
    caps,
    ...(options.nameOption ? { nameOption: options.nameOption } : {}),
  });
  const labelNames = await recordIngestStart(
    client,
    dataset,
    {
      labelNames: source.labelNames,
      columns: Object.fromEntries(source.columns.map((c) => [c.name, c.type])),
      source: source.description,
    },
    caps,
  );
  const writer = await SampleWriter.open(client, {
    dataset,
    columns: source.columns,
    ...(options.groupBytes !== undefined ? { groupBytes: options.groupBytes } : {}),
    ...(options.fresh !== undefined ? { fresh: options.fresh } : {}),
  });

  const ns = datasetNamespace(dataset);
  const progress: IngestProgress = {
    total: source.total ?? 0,
    done: 0,
    written: 0,
    alreadyPresent: 0,
    failed: 0,
    bytesWritten: 0,
  };
  const skipped: IngestSkip[] = [];
  const files = new SourceFileReader();

  const skip = (entry: IngestEntry, reason: string): void => {
    const where = entry.filePath ?? entry.sourceKey;
    if (options.strict) {
      const strict = (options.nameOption ?? ownOptionName)('strict');
      throw invalidArgument(`${where}: ${reason} (${strict} stops at the first bad sample)`);
    }
    const skip = { origin: entry.origin, path: where, reason };
    progress.failed++;
    if (skipped.length < MAX_LISTED_SKIPS) skipped.push(skip);
    options.onSkip?.(skip);
  };

  const ingestOne = async (entry: IngestEntry): Promise<void> => {
    if (entry.error !== undefined) return skip(entry, entry.error);
    const id = sampleId(entry.sourceKey, ns);
    if (await writer.exists(id)) {
      progress.alreadyPresent++;
      return;
    }
    let data: Buffer;
    let labelBlob: Buffer | undefined;
    try {
      data = entry.data ?? (await files.read(entry.filePath ?? entry.sourceKey, MAX_SAMPLE_BYTES));
      if (options.preprocess) data = await preprocessImage(data, options.preprocess);
      labelBlob =
        entry.labelBlob ??
        (entry.labelBlobPath !== undefined ? await files.read(entry.labelBlobPath) : undefined);
    } catch (err) {
      return skip(entry, describe(err));
    }
    const problem = sampleProblem(
      { data, label: entry.label, labelBlob },
      { labelNames, unlabelled: source.unlabelled !== undefined },
    );
    if (problem !== undefined) return skip(entry, `sample ${problem}`);
    await writer.write({
      id,
      sourceKey: entry.sourceKey,
      data,
      label: entry.label,
      ...(labelBlob ? { labelBlob } : {}),
      metadata: entry.metadata,
    });
    progress.written++;
    progress.bytesWritten += data.length;
  };

  // In source order, `concurrency` samples at a time, the source read only as far as that
  // needs. The first failure stops reading the source (a database gone 1% into a 2 TB tar
  // must not read the rest first), but the samples already under way are let finish, so the
  // error is thrown once nothing of this ingest is still writing. A cancel starts no further
  // sample and rejects with the signal's reason once the samples under way (at most
  // `concurrency`) have finished too: what is in the database then stays as it is.
  let failure: { error: unknown } | undefined;
  let cancelled: { error: unknown } | undefined;
  const stop = new AbortController();
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
  let underWay = 0;
  let idle: (() => void) | undefined;
  try {
    await pMap(
      source.samples(),
      async (entry) => {
        if (failure !== undefined) return;
        underWay++;
        try {
          await ingestOne(entry);
        } catch (error) {
          failure ??= { error };
          stop.abort(error);
          return;
        } finally {
          if (--underWay === 0) idle?.();
        }
        progress.done++;
        if (progress.done > progress.total) progress.total = progress.done;
        options.onProgress?.(progress);
      },
      { concurrency: Math.max(1, options.concurrency), signal },
    );
  } catch (err) {
    if (failure === undefined) cancelled = { error: err };
  }
  if (underWay > 0) await new Promise<void>((resolve) => (idle = resolve));
  if (failure !== undefined) throw failure.error;
  if (cancelled !== undefined) throw cancelled.error;

  const counts =
    options.refreshCounts === false ? undefined : await refreshDatasetCounts(client, dataset);
  return {
    ...progress,
    seconds: (performance.now() - started) / 1000,
    skipped,
    dataset: counts ?? { sampleCount: 0, totalBytes: 0, classCounts: new Map() },
    fresh: writer.fresh,
    ...(source.unlabelled !== undefined ? { unlabelled: source.unlabelled } : {}),
  };
}

/** Skipped samples listed in a summary (all are counted, and each is passed to `onSkip`). */
const MAX_LISTED_SKIPS = 1000;

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return 'file not found';
  if (e?.code === 'EACCES') return 'permission denied';
  if (e?.code === 'EISDIR') return 'is a folder, not a file';
  return e instanceof Error ? e.message : String(err);
}
