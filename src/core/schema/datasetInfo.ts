import cassandra from 'cassandra-driver';
import { DEFAULT_INGEST_CAPS, type IngestCapRules } from '../config/ingestCaps.js';
import { invalidArgument } from '../errors/LoaderError.js';
import { overIngestCap } from '../ingest/checkIngestCaps.js';
import { QUERY_PROFILES } from '../db/consistency.js';
import { scanTokenRanges } from '../db/scanTokenRanges.js';
import { requireDataset } from './datasetSchema.js';

/** What the database holds about a dataset, as stored in its `dataset_info` row. */
export interface DatasetInfo {
  dataset: string;
  labelNames: string[];
  columns: Record<string, string>;
  sampleCount: number;
  totalBytes: number;
  classCounts: Map<number, number>;
  sources: string[];
  createdAt: Date | null;
  updatedAt: Date | null;
  /** Made by the first ingest; what the sample cache keys entries by (null: before they existed). */
  generation: string | null;
}

/** Reads a dataset's info row; NOT_FOUND when the dataset does not exist. */
export async function readDatasetInfo(
  client: cassandra.Client,
  dataset: string,
): Promise<DatasetInfo> {
  await requireDataset(client, dataset);
  const rs = await client.execute(
    `SELECT * FROM ${dataset}.dataset_info WHERE dataset = ?`,
    [dataset],
    { prepare: true },
  );
  const row = rs.first();
  const classCounts = new Map<number, number>();
  const stored = (row?.['class_counts'] ?? {}) as Record<string, cassandra.types.Long>;
  for (const [label, count] of Object.entries(stored)) {
    classCounts.set(Number(label), Number(count));
  }
  return {
    dataset,
    labelNames: (row?.['label_names'] as string[] | null) ?? [],
    columns: (row?.['columns'] as Record<string, string> | null) ?? {},
    sampleCount: row?.['sample_count'] ? Number(row['sample_count']) : 0,
    totalBytes: row?.['total_bytes'] ? Number(row['total_bytes']) : 0,
    classCounts,
    sources: (row?.['sources'] as string[] | null) ?? [],
    createdAt: (row?.['created_at'] as Date | null) ?? null,
    updatedAt: (row?.['updated_at'] as Date | null) ?? null,
    generation:
      (row?.['generation'] as cassandra.types.TimeUuid | null | undefined)?.toString() ?? null,
  };
}

/**
 * Records the label names, declared columns and source of an ingest before it writes samples.
 * Label names are fixed by the first ingest that gives them: a later ingest with another map
 * would silently relabel stored samples, so it is refused. A source the dataset does not
 * record yet is refused (INVALID_ARGUMENT) when it records `caps.maxSources` already. Returns
 * the dataset's class names from now on (the stored ones, or this ingest's when none were
 * stored).
 */
export async function recordIngestStart(
  client: cassandra.Client,
  dataset: string,
  ingest: { labelNames: string[]; columns: Record<string, string>; source: string },
  caps: IngestCapRules = DEFAULT_INGEST_CAPS,
): Promise<string[]> {
  const info = await readDatasetInfo(client, dataset);
  if (!info.sources.includes(ingest.source) && info.sources.length >= caps.maxSources) {
    throw overIngestCap(
      caps,
      'maxSources',
      `dataset ${dataset} records ${info.sources.length} sources already, and this ingest's ` +
        `source ${JSON.stringify(ingest.source)} would be one more, over the cap of ` +
        `${caps.maxSources} sources per dataset`,
      'give this ingest the source of an earlier one, or raise the cap',
    );
  }
  if (
    ingest.labelNames.length > 0 &&
    info.labelNames.length > 0 &&
    JSON.stringify(ingest.labelNames) !== JSON.stringify(info.labelNames)
  ) {
    throw invalidArgument(
      `dataset ${dataset} already maps labels to ${JSON.stringify(info.labelNames)}, but this ` +
        `source has classes ${JSON.stringify(ingest.labelNames)}; ingest it into a new dataset`,
    );
  }
  await client.execute(
    `UPDATE ${dataset}.dataset_info SET columns = columns + ?, sources = sources + ?, ` +
      'updated_at = ? WHERE dataset = ?',
    [ingest.columns, [ingest.source], new Date(), dataset],
    { prepare: true, executionProfile: QUERY_PROFILES.write },
  );
  // Set once, by whichever ingest comes first, with a conditional update: several processes
  // start ingesting one dataset at once (`--workers`, `--shard`, IngestSamples calls), and
  // two plain overwrites of a list column at once can leave both lists concatenated.
  if (info.generation === null) {
    await client.execute(
      `UPDATE ${dataset}.dataset_info SET generation = ?, created_at = ? WHERE dataset = ? ` +
        'IF generation = null',
      // Made once, with the info row: see readDatasetGeneration.
      [cassandra.types.TimeUuid.now(), info.createdAt ?? new Date(), dataset],
      { prepare: true, executionProfile: QUERY_PROFILES.write },
    );
  }
  let labelNames = info.labelNames;
  if (labelNames.length === 0 && ingest.labelNames.length > 0) {
    const rs = await client.execute(
      `UPDATE ${dataset}.dataset_info SET label_names = ? WHERE dataset = ? IF label_names = null`,
      [ingest.labelNames, dataset],
      { prepare: true, executionProfile: QUERY_PROFILES.write },
    );
    labelNames = rs.wasApplied()
      ? ingest.labelNames
      : ((rs.first()?.['label_names'] as string[] | null) ?? []);
    if (JSON.stringify(labelNames) !== JSON.stringify(ingest.labelNames)) {
      throw invalidArgument(
        `dataset ${dataset} already maps labels to ${JSON.stringify(labelNames)}, but this ` +
          `source has classes ${JSON.stringify(ingest.labelNames)}; ingest it into a new dataset`,
      );
    }
  }
  return labelNames;
}

/**
 * The dataset's generation: made with its info row by its first ingest, so a dataset dropped
 * and made again under the same name has another. The sample cache keys entries by it and
 * never serves a re-made dataset bytes of before. Later ingests keep it (and hosts' caches
 * warm): ingest never rewrites a sample whose metadata row exists (it skips ids already there;
 * a sample's metadata row is written only after its data row, so a sample without one was
 * never in a split or a stream), so a sample's bytes never change
 * under one generation. A dataset written before generations existed gives its creation time
 * until its next ingest; undefined when there is no info row.
 */
export async function readDatasetGeneration(
  client: cassandra.Client,
  dataset: string,
): Promise<string | undefined> {
  await requireDataset(client, dataset);
  const read = (columns: string): Promise<cassandra.types.ResultSet> =>
    client.execute(`SELECT ${columns} FROM ${dataset}.dataset_info WHERE dataset = ?`, [dataset], {
      prepare: true,
    });
  const row = (
    await read('generation, created_at').catch((err: unknown) => {
      // A dataset made before generations existed has no such column until its next ingest.
      if (/generation/i.test((err as Error).message)) return read('created_at');
      throw err;
    })
  ).first();
  const generation = row?.['generation'] as cassandra.types.TimeUuid | null | undefined;
  if (generation) return generation.toString();
  const created = row?.['created_at'] as Date | null | undefined;
  return created ? `created ${created.toISOString()}` : undefined;
}

/** Counts recomputed from the metadata table. */
export interface DatasetCounts {
  sampleCount: number;
  totalBytes: number;
  classCounts: Map<number, number>;
}

/**
 * Recomputes sample count, bytes and per-class counts by scanning the metadata table and
 * stores them in the info row. Counts are never kept as running counters: an interrupted or
 * repeated ingest would make those drift.
 */
export async function refreshDatasetCounts(
  client: cassandra.Client,
  dataset: string,
): Promise<DatasetCounts> {
  const counts: DatasetCounts = { sampleCount: 0, totalBytes: 0, classCounts: new Map() };
  await scanTokenRanges(client, {
    keyspace: dataset,
    table: 'metadata',
    columns: ['id', 'label', 'size_bytes'],
    onRows: (rows) => {
      for (const r of rows) {
        counts.sampleCount++;
        counts.totalBytes += Number(r['size_bytes'] ?? 0);
        const label = r['label'] === null ? -1 : Number(r['label']);
        counts.classCounts.set(label, (counts.classCounts.get(label) ?? 0) + 1);
      }
    },
  });
  const classCounts = Object.fromEntries(
    [...counts.classCounts].map(([k, v]) => [k, cassandra.types.Long.fromNumber(v)]),
  );
  await client.execute(
    `UPDATE ${dataset}.dataset_info SET sample_count = ?, total_bytes = ?, class_counts = ?, ` +
      'updated_at = ? WHERE dataset = ?',
    [
      cassandra.types.Long.fromNumber(counts.sampleCount),
      cassandra.types.Long.fromNumber(counts.totalBytes),
      classCounts,
      new Date(),
      dataset,
    ],
    { prepare: true, executionProfile: QUERY_PROFILES.write },
  );
  return counts;
}
