import type cassandra from 'cassandra-driver';
import type { BatchColumn } from '../columns/BatchColumn.js';
import { ColumnReader } from '../columns/ColumnReader.js';
import { planColumns } from '../columns/planColumns.js';
import { validateColumnNames } from '../columns/validateColumnNames.js';
import { invalidArgument } from '../errors/LoaderError.js';
import { readDatasetInfo } from '../schema/datasetInfo.js';
import { datasetNamespace, sampleId } from '../schema/sampleId.js';
import type { Ledger, LedgerAppearanceRow, LedgerBatchRow, LedgerJob } from './Ledger.js';

/** A recorded batch with its samples' source keys and the metadata columns asked for. */
export interface LedgerBatchView extends LedgerBatchRow {
  /** Each sample's source key (null: its metadata row is gone). */
  sourceKeys: (string | null)[];
  columns: BatchColumn[];
}

/** How {@link readLedgerBatches} reads the samples' metadata. */
export interface LedgerReadOptions {
  /** The database the job's datasets live in. */
  client: cassandra.Client;
  /** Metadata columns to add (names checked here); `source_key` always comes. */
  columns: readonly string[];
  includeSuperseded: boolean;
  readAttempts: number;
  retryBaseMs: number;
  signal: AbortSignal;
}

/**
 * A rank's batches `first` to `last` of an epoch (see `Ledger.batches`), each with its
 * samples' source keys and the requested metadata columns, read from the job's datasets.
 */
export async function readLedgerBatches(
  ledger: Ledger,
  job: LedgerJob,
  range: { epoch: number; rank: number; first: number; last: number },
  options: LedgerReadOptions,
): Promise<LedgerBatchView[]> {
  const extra = validateColumnNames([...options.columns]).filter((c) => c !== 'source_key');
  const datasets = job.sources.map((s) => s.dataset);
  const sources = await Promise.all(
    datasets.map(async (dataset) => ({
      dataset,
      columns: (await readDatasetInfo(options.client, dataset)).columns,
    })),
  );
  const plan = planColumns(['source_key', ...extra], sources);
  const rows = await ledger.batches(job.jobId, range, options.includeSuperseded);
  const reader = new ColumnReader({
    client: options.client,
    datasets,
    plan,
    readAttempts: options.readAttempts,
    retryBaseMs: options.retryBaseMs,
    signal: options.signal,
  });
  const views: LedgerBatchView[] = [];
  for (const row of rows) {
    const ids = splitIds(row.ids);
    const [keys, ...columns] = await reader.read(
      ids.map((id, i) => ({ id, source: row.sourceIndexes?.[i] ?? 0 })),
    );
    views.push({ ...row, sourceKeys: keys!.values as (string | null)[], columns });
  }
  return views;
}

/** A sample named by its id (16 bytes) or by its source key (and dataset, in a mixed job). */
export type LedgerSampleRef = { id: Buffer } | { sourceKey: string; dataset?: string };

/**
 * Every appearance of a sample in a job (see `Ledger.appearances`), and its id. A source key
 * names its dataset's sample: the dataset may be left out when the job reads only one.
 */
export async function findLedgerSample(
  ledger: Ledger,
  job: LedgerJob,
  sample: LedgerSampleRef,
  includeSuperseded: boolean,
): Promise<{ sampleId: Buffer; appearances: LedgerAppearanceRow[] }> {
  const id = 'id' in sample ? sample.id : idOfKey(job, sample.sourceKey, sample.dataset);
  if (id.length !== 16) {
    throw invalidArgument(`a sample id is 16 bytes (a UUID's), got ${id.length}`);
  }
  return { sampleId: id, appearances: await ledger.appearances(job, id, includeSuperseded) };
}

function idOfKey(job: LedgerJob, sourceKey: string, dataset: string | undefined): Buffer {
  if (sourceKey.length === 0)
    throw invalidArgument('the sample has neither an id nor a source key');
  const datasets = [...new Set(job.sources.map((s) => s.dataset))];
  let chosen = dataset;
  if (chosen === undefined || chosen === '') {
    if (datasets.length !== 1) {
      throw invalidArgument(
        `job ${job.jobId} reads datasets ${datasets.join(', ')}: name the dataset of source key ` +
          `${JSON.stringify(sourceKey)}`,
      );
    }
    chosen = datasets[0]!;
  } else if (!datasets.includes(chosen)) {
    throw invalidArgument(
      `job ${job.jobId} does not read dataset ${chosen} (it reads ${datasets.join(', ')})`,
    );
  }
  return Buffer.from(sampleId(sourceKey, datasetNamespace(chosen)).replaceAll('-', ''), 'hex');
}

/** The 16-byte ids of a row's concatenation. */
export function splitIds(ids: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i + 16 <= ids.length; i += 16) out.push(ids.subarray(i, i + 16));
  return out;
}
