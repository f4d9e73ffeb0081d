import { readFile } from 'node:fs/promises';
import cassandra from 'cassandra-driver';
import pMap from 'p-map';
import { retryableDriverError } from '../db/retryableDriverError.js';
import { invalidArgument, unavailable } from '../errors/LoaderError.js';
import { ensureDatasetSchema } from '../schema/datasetSchema.js';
import { quoteIdentifier } from '../schema/identifiers.js';
import {
  recordIngestStart,
  refreshDatasetCounts,
  type DatasetCounts,
} from '../schema/datasetInfo.js';
import type { Replication } from '../schema/replication.js';
import { datasetNamespace, sampleId } from '../schema/sampleId.js';
import type { IngestEntry, MetadataValue } from './IngestEntry.js';
import type { IngestSource } from './IngestSource.js';
import { preprocessImage, type PreprocessOptions } from './preprocessImage.js';

/** Options of {@link ingestDataset}. */
export interface IngestOptions {
  dataset: string;
  source: IngestSource;
  replication: Replication;
  /** Re-encode images with sharp; absent: store each file's bytes unchanged. */
  preprocess?: PreprocessOptions;
  /** Samples read and written at once. */
  concurrency: number;
  /** Stop at the first unreadable or undecodable file instead of skipping it. */
  strict: boolean;
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
  skipped: IngestSkip[];
  dataset: DatasetCounts;
}

/**
 * Writes a source's samples into a dataset: the schema is created if needed; each sample's
 * data row and metadata row go in one logged batch, so they appear together or not at all;
 * ids already present are skipped without reading their files, so a re-run resumes an
 * interrupted ingest and a repeated one changes nothing. Counts are recomputed from the tables
 * at the end.
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
    throw unavailable(
      `writing to dataset ${options.dataset} failed: ${trouble}; samples written so far are ` +
        'kept, and running the same ingest again resumes it',
      err,
    );
  }
}

async function ingest(client: cassandra.Client, options: IngestOptions): Promise<IngestSummary> {
  const { dataset, source } = options;
  const started = performance.now();
  await ensureDatasetSchema(client, {
    dataset,
    replication: options.replication,
    columns: source.columns,
  });
  await recordIngestStart(client, dataset, {
    labelNames: source.labelNames,
    columns: Object.fromEntries(source.columns.map((c) => [c.name, c.type])),
    source: source.description,
  });

  const ns = datasetNamespace(dataset);
  const colNames = source.columns.map((c) => c.name);
  const existsQuery = `SELECT id FROM ${dataset}.metadata WHERE id = ?`;
  const sampleInsert = `INSERT INTO ${dataset}.samples (id, label, label_blob, data) VALUES (?, ?, ?, ?)`;
  const metaInsert =
    `INSERT INTO ${dataset}.metadata (id, label, source_key, size_bytes` +
    colNames.map((c) => `, ${quoteIdentifier(c)}`).join('') +
    `) VALUES (?, ?, ?, ?${', ?'.repeat(colNames.length)})`;

  const progress: IngestProgress = {
    total: source.entries.length,
    done: 0,
    written: 0,
    alreadyPresent: 0,
    failed: 0,
    bytesWritten: 0,
  };
  const skipped: IngestSkip[] = [];
  const seen = new Map<string, string>();
  for (const e of source.entries) {
    const prev = seen.get(e.sourceKey);
    if (prev !== undefined) {
      throw invalidArgument(`${e.origin}: path ${e.sourceKey} is listed twice (also at ${prev})`);
    }
    seen.set(e.sourceKey, e.origin);
  }

  const ingestOne = async (entry: IngestEntry): Promise<void> => {
    const id = sampleId(entry.sourceKey, ns);
    const exists = await client.execute(existsQuery, [id], { prepare: true });
    if (exists.rowLength > 0) {
      progress.alreadyPresent++;
      return;
    }
    let data: Buffer;
    let labelBlob: Buffer | undefined;
    try {
      data = entry.data ?? (await readFile(entry.filePath));
      if (options.preprocess) data = await preprocessImage(data, options.preprocess);
      if (entry.labelBlobPath) labelBlob = await readFile(entry.labelBlobPath);
    } catch (err) {
      const skip = { origin: entry.origin, path: entry.filePath, reason: describe(err) };
      if (options.strict) {
        throw invalidArgument(
          `${skip.path}: ${skip.reason} (--strict stops at the first bad file)`,
        );
      }
      progress.failed++;
      skipped.push(skip);
      options.onSkip?.(skip);
      return;
    }
    const label = entry.label ?? cassandra.types.unset;
    await client.batch(
      [
        { query: sampleInsert, params: [id, label, labelBlob ?? cassandra.types.unset, data] },
        {
          query: metaInsert,
          params: [
            id,
            label,
            entry.sourceKey,
            data.length,
            ...colNames.map((c) => toCql(entry.metadata[c] ?? null)),
          ],
        },
      ],
      { prepare: true, logged: true },
    );
    progress.written++;
    progress.bytesWritten += data.length;
  };

  // In source order, `concurrency` samples at a time. After the first failure the remaining
  // samples are passed over without work, but the samples already under way are let finish,
  // so the error is thrown once nothing of this ingest is still writing. A cancel stops at
  // once (p-map rejects with the signal's reason) and starts no further sample.
  let failure: { error: unknown } | undefined;
  await pMap(
    source.entries,
    async (entry) => {
      if (failure !== undefined) return;
      try {
        await ingestOne(entry);
      } catch (error) {
        failure ??= { error };
        return;
      }
      progress.done++;
      options.onProgress?.(progress);
    },
    {
      concurrency: Math.max(1, Math.min(options.concurrency, source.entries.length)),
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  if (failure !== undefined) throw failure.error;

  const counts = await refreshDatasetCounts(client, dataset);
  return {
    ...progress,
    seconds: (performance.now() - started) / 1000,
    skipped,
    dataset: counts,
  };
}

function toCql(value: MetadataValue): unknown {
  if (value === null) return cassandra.types.unset;
  if (typeof value === 'bigint') return cassandra.types.Long.fromString(value.toString());
  return value;
}

function describe(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return 'file not found';
  if (e?.code === 'EACCES') return 'permission denied';
  if (e?.code === 'EISDIR') return 'is a folder, not a file';
  return e instanceof Error ? e.message : String(err);
}
