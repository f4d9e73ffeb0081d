import { invalidArgument } from '../errors/LoaderError.js';

/** The most metadata columns a stream may ask for. */
export const MAX_STREAM_COLUMNS = 64;

/** A metadata column's name as ingest makes them: lower case, a letter first, at most 48. */
const COLUMN_NAME = /^[a-z][a-z0-9_]{0,47}$/;

/** Built-in metadata columns a batch carries elsewhere, and where. */
const IN_THE_BATCH: Readonly<Record<string, string>> = {
  id: 'Batch.ids',
  label: 'Batch.labels',
  size_bytes: 'Batch.data_sizes',
};

/**
 * Checks the names of the metadata columns a stream asks for, before any database read: each a
 * column name (lower case, a letter first, letters, digits and `_`, at most 48 characters),
 * none twice, none a built-in column the batch already carries (`source_key` may be asked
 * for), at most {@link MAX_STREAM_COLUMNS}. Whether the datasets have them is the server's
 * check (`planColumns`). Shared by the server and the TypeScript SDK, so both refuse with the
 * same words.
 *
 * @throws {@link LoaderError} INVALID_ARGUMENT naming the column.
 */
export function validateColumnNames(names: readonly string[]): string[] {
  if (names.length > MAX_STREAM_COLUMNS) {
    throw invalidArgument(
      `columns names ${names.length} columns; a stream returns at most ${MAX_STREAM_COLUMNS}`,
    );
  }
  const seen = new Set<string>();
  for (const name of names) {
    if (typeof name !== 'string' || !COLUMN_NAME.test(name)) {
      const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, 64)) : String(name);
      throw invalidArgument(
        `columns: ${shown} is not a metadata column name (lower case letters, digits and _, ` +
          'a letter first, at most 48 characters)',
      );
    }
    const carried = IN_THE_BATCH[name];
    if (carried !== undefined) {
      throw invalidArgument(
        `columns: ${JSON.stringify(name)} is in every batch already (${carried})`,
      );
    }
    if (seen.has(name)) throw invalidArgument(`columns names ${JSON.stringify(name)} twice`);
    seen.add(name);
  }
  return [...names];
}
