import type { IngestTarget__Output } from '../../generated/scylla_loader/v1/IngestTarget.js';
import {
  COLUMN_TYPES,
  invalidArgument,
  isColumnType,
  validateIdentifier,
  type ColumnSpec,
} from '../../core/index.js';

/** Longest `IngestTarget.source`, in characters (it is stored in the dataset's info row). */
export const MAX_SOURCE_CHARS = 1024;

/** An IngestSamples call's target, checked. */
export interface IngestTargetSpec {
  dataset: string;
  labelNames: string[];
  columns: ColumnSpec[];
  /** What to do with a sample against the rules (UNSPECIFIED is fail). */
  policy: 'fail' | 'skip';
  /** What the dataset's info row records as this ingest's source. */
  source: string;
}

/**
 * Checks the target of an IngestSamples call's first request: present, a valid dataset name,
 * columns with valid names and one of the column types, distinct non-empty class names. Each
 * failure is INVALID_ARGUMENT naming the field and the value. Built-in column names and
 * columns stored with another type are refused later, by `ensureDatasetSchema`.
 */
export function toIngestTarget(target: IngestTarget__Output | null): IngestTargetSpec {
  if (target === null) {
    throw invalidArgument(
      'the first request of an IngestSamples call must carry target (the dataset, and its ' +
        'class names and metadata columns); later requests may leave it out',
    );
  }
  const dataset = validateIdentifier(target.dataset, 'dataset');
  const columns: ColumnSpec[] = [];
  for (const [name, type] of Object.entries(target.columns)) {
    validateIdentifier(name, 'metadata column');
    if (!isColumnType(type)) {
      throw invalidArgument(
        `target column ${JSON.stringify(name)} has type ${JSON.stringify(type)}; use one of ` +
          COLUMN_TYPES.join(', '),
      );
    }
    columns.push({ name, type });
  }
  const seen = new Set<string>();
  target.labelNames.forEach((name, i) => {
    if (name === '') throw invalidArgument(`target label_names[${i}] is empty; name every class`);
    if (seen.has(name)) {
      throw invalidArgument(
        `target label_names lists ${JSON.stringify(name)} twice (again at ${i}); class names ` +
          'are distinct',
      );
    }
    seen.add(name);
  });
  if (target.source.length > MAX_SOURCE_CHARS) {
    throw invalidArgument(
      `target source is ${target.source.length} characters, over the limit of ${MAX_SOURCE_CHARS}`,
    );
  }
  return {
    dataset,
    labelNames: target.labelNames,
    columns,
    policy: target.badSamplePolicy === 'BAD_SAMPLE_POLICY_SKIP' ? 'skip' : 'fail',
    source: target.source === '' ? 'rpc' : target.source,
  };
}
