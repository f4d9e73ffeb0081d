import type {
  IngestMetadataValue,
  IngestSampleInput,
  MetadataColumnType,
} from './IngestOptions.js';

/**
 * The metadata columns of an ingest that declares none: every key of the samples given (the
 * first request's), typed by its first value that is not null: a string is text, a boolean
 * boolean, a bigint or an integer number bigint (which also takes any later integer), any
 * other number double. A key whose values are all null is left out (nothing to store).
 *
 * @internal
 */
export function inferColumns(
  samples: readonly IngestSampleInput[],
): Record<string, MetadataColumnType> {
  const columns: Record<string, MetadataColumnType> = {};
  for (const sample of samples) {
    for (const [column, value] of Object.entries(sample.metadata ?? {})) {
      if (column in columns) continue;
      const type = columnTypeOf(value);
      if (type !== undefined) columns[column] = type;
    }
  }
  return columns;
}

function columnTypeOf(value: IngestMetadataValue | undefined): MetadataColumnType | undefined {
  switch (typeof value) {
    case 'string':
      return 'text';
    case 'boolean':
      return 'boolean';
    case 'bigint':
      return 'bigint';
    case 'number':
      return Number.isInteger(value) ? 'bigint' : 'double';
    default:
      return undefined;
  }
}
