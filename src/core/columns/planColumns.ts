import { invalidArgument } from '../errors/LoaderError.js';
import { type ColumnType, isColumnType } from '../schema/columnTypes.js';

/** The built-in metadata column a stream may ask for besides the dataset's typed ones. */
const SOURCE_KEY = 'source_key';

/** What a stream's sources hold: each one's dataset and its typed columns (name to CQL type). */
export interface ColumnSource {
  dataset: string;
  columns: Readonly<Record<string, string>>;
}

/** The columns a stream returns, and which of them each source's metadata table holds. */
export interface ColumnPlan {
  columns: { name: string; type: ColumnType }[];
  /** By source: the names (of `columns`) its dataset has; the others are null for its samples. */
  present: string[][];
}

/**
 * Checks the metadata columns a stream asks for (their names checked already: see
 * `validateColumnNames`) against its sources' datasets: each must be `source_key` or a typed
 * column of at least one source, with one type wherever it appears. Refusals are INVALID_ARGUMENT naming the column and what the
 * datasets have, so the caller can correct the request without reading the schema.
 */
export function planColumns(requested: readonly string[], sources: ColumnSource[]): ColumnPlan {
  const columns = requested.map((name) => ({ name, type: columnType(name, sources) }));
  return {
    columns,
    present: sources.map((s) =>
      columns
        .filter((c) => c.name === SOURCE_KEY || Object.hasOwn(s.columns, c.name))
        .map((c) => c.name),
    ),
  };
}

/** The type of column `name` in the sources that have it; refuses an unknown or mixed one. */
function columnType(name: string, sources: ColumnSource[]): ColumnType {
  if (name === SOURCE_KEY) return 'text';
  const types = new Map<string, string[]>();
  for (const s of sources) {
    const type = Object.hasOwn(s.columns, name) ? s.columns[name] : undefined;
    if (type === undefined) continue;
    types.set(type, [...(types.get(type) ?? []), s.dataset]);
  }
  if (types.size === 0) {
    const known = [...new Set(sources.flatMap((s) => Object.keys(s.columns)))].sort();
    const where =
      sources.length === 1
        ? `dataset ${sources[0]!.dataset}`
        : `any source's dataset (${sources.map((s) => s.dataset).join(', ')})`;
    throw invalidArgument(
      `column ${JSON.stringify(name)} is not in ${where}; the columns a stream can return ` +
        `are ${[SOURCE_KEY, ...known].join(', ')}`,
    );
  }
  if (types.size > 1) {
    throw invalidArgument(
      `column ${JSON.stringify(name)} has different types in the sources' datasets (` +
        [...types].map(([t, ds]) => `${t} in ${ds.join(', ')}`).join('; ') +
        '); a stream returns a column of one type',
    );
  }
  const [type] = types.keys();
  if (type === undefined || !isColumnType(type)) {
    throw invalidArgument(
      `column ${JSON.stringify(name)} has type ${type}, which streams do not return`,
    );
  }
  return type;
}
