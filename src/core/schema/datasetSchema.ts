import type cassandra from 'cassandra-driver';
import { DEFAULT_INGEST_CAPS, type IngestCapRules } from '../config/ingestCaps.js';
import { invalidArgument, notFound } from '../errors/LoaderError.js';
import { overIngestCap } from '../ingest/checkIngestCaps.js';
import type { ColumnSpec, ColumnType } from './columnTypes.js';
import { quoteIdentifier, validateIdentifier } from './identifiers.js';
import { replicationCql, type Replication } from './replication.js';
import { type NameOption, ownOptionName } from '../ingest/nameOption.js';

/** Metadata columns every dataset has; user columns may not reuse these names. */
export const BUILT_IN_METADATA_COLUMNS: Readonly<Record<string, ColumnType | 'uuid'>> = {
  id: 'uuid',
  label: 'int',
  source_key: 'text',
  size_bytes: 'int',
};

/** What {@link ensureDatasetSchema} needs to know. */
export interface DatasetSchemaOptions {
  dataset: string;
  replication: Replication;
  /** User metadata columns; new ones are added to an existing table. */
  columns: readonly ColumnSpec[];
  /** Caps on the dataset's metadata columns (default: {@link DEFAULT_INGEST_CAPS}). */
  caps?: IngestCapRules;
  /**
   * How a refusal names the caller's option that declares a column's type (`declaredTypes`):
   * the CLI passes its flag (`--column`); default: the option's own name.
   */
  nameOption?: NameOption;
}

/**
 * Creates the dataset's keyspace and tables if absent, and adds metadata columns the table
 * does not have yet. Running it twice is a no-op. A column that exists with another type is an
 * INVALID_ARGUMENT error (changing a type in place would corrupt stored values), and so are
 * columns that would take the dataset over `caps.maxMetadataColumns`: refused before any
 * schema change. Two processes adding different columns at once may each pass the check, so
 * the cap holds per process (the loader adds a dataset's columns one call at a time).
 */
export async function ensureDatasetSchema(
  client: cassandra.Client,
  options: DatasetSchemaOptions,
): Promise<void> {
  const ks = validateIdentifier(options.dataset, 'dataset');
  const columns = options.columns.map((c) => ({
    name: validateIdentifier(c.name, 'metadata column'),
    type: c.type,
  }));
  const caps = options.caps ?? DEFAULT_INGEST_CAPS;
  if (columns.length > caps.maxMetadataColumns) {
    throw overIngestCap(
      caps,
      'maxMetadataColumns',
      `this ingest declares ${columns.length} metadata columns for dataset ${ks}, over the ` +
        `cap of ${caps.maxMetadataColumns} metadata columns per dataset`,
    );
  }
  for (const c of columns) {
    if (c.name in BUILT_IN_METADATA_COLUMNS) {
      throw invalidArgument(
        `metadata column ${JSON.stringify(c.name)} is built in; rename it in the source ` +
          `(built-in columns: ${Object.keys(BUILT_IN_METADATA_COLUMNS).join(', ')})`,
      );
    }
  }

  await client.execute(
    `CREATE KEYSPACE IF NOT EXISTS ${ks} WITH replication = ${replicationCql(options.replication)}`,
  );
  // The hot path: one single-row partition read per sample returns label and bytes together.
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${ks}.samples ` +
      '(id uuid PRIMARY KEY, label int, label_blob blob, data blob)',
  );
  const userCols = columns.map((c) => `, ${quoteIdentifier(c.name)} ${c.type}`).join('');
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${ks}.metadata ` +
      `(id uuid PRIMARY KEY, label int, source_key text, size_bytes int${userCols})`,
  );
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${ks}.dataset_info (` +
      'dataset text PRIMARY KEY, label_names list<text>, columns map<text, text>, ' +
      'sample_count bigint, total_bytes bigint, class_counts map<int, bigint>, ' +
      'sources set<text>, created_at timestamp, updated_at timestamp, generation timeuuid)',
  );
  // Datasets made before generations existed get the column on their next ingest.
  const infoColumns = await client.execute(
    'SELECT column_name FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
    [ks, 'dataset_info'],
    { prepare: true },
  );
  if (!infoColumns.rows.some((r) => r['column_name'] === 'generation')) {
    await client
      .execute(`ALTER TABLE ${ks}.dataset_info ADD generation timeuuid`)
      .catch((err: unknown) => {
        // Another ingest of the dataset added it first.
        if (!/conflicts with an existing column|already exists/i.test((err as Error).message)) {
          throw err;
        }
      });
  }

  const existing = await metadataColumnTypes(client, ks);
  const added = columns.filter((c) => !existing.has(c.name)).length;
  const stored = [...existing.keys()].filter((c) => !(c in BUILT_IN_METADATA_COLUMNS)).length;
  if (added > 0 && stored + added > caps.maxMetadataColumns) {
    throw overIngestCap(
      caps,
      'maxMetadataColumns',
      `dataset ${ks} has ${stored} metadata columns and this ingest would add ${added}, ` +
        `over the cap of ${caps.maxMetadataColumns} metadata columns per dataset`,
    );
  }
  for (const c of columns) {
    const have = existing.get(c.name);
    if (have === undefined) {
      await client.execute(`ALTER TABLE ${ks}.metadata ADD ${quoteIdentifier(c.name)} ${c.type}`);
    } else if (have !== c.type) {
      throw invalidArgument(
        `metadata column ${JSON.stringify(c.name)} of dataset ${ks} is stored as ${have}, ` +
          `but this ingest has it as ${c.type}; declare it as ${have} ` +
          `(e.g. ${(options.nameOption ?? ownOptionName)('declaredTypes')} ${c.name}:${have})`,
      );
    }
  }
}

/** The stored types of a dataset's metadata columns, by name (built-in ones included). */
export async function metadataColumnTypes(
  client: cassandra.Client,
  dataset: string,
): Promise<Map<string, string>> {
  const rs = await client.execute(
    'SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
    [dataset, 'metadata'],
    { prepare: true },
  );
  return new Map(rs.rows.map((r) => [String(r['column_name']), String(r['type'])]));
}

/** True when the dataset's keyspace and its tables exist. */
export async function datasetExists(client: cassandra.Client, dataset: string): Promise<boolean> {
  const rs = await client.execute(
    'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?',
    [dataset],
    { prepare: true },
  );
  const tables = new Set(rs.rows.map((r) => String(r['table_name'])));
  return ['samples', 'metadata', 'dataset_info'].every((t) => tables.has(t));
}

/** Throws NOT_FOUND, saying what to do, when the dataset does not exist. */
export async function requireDataset(client: cassandra.Client, dataset: string): Promise<void> {
  if (!(await datasetExists(client, dataset))) {
    throw notFound(`dataset ${JSON.stringify(dataset)} does not exist; ingest it first`);
  }
}
