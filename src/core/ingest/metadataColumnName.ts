import { BUILT_IN_METADATA_COLUMNS } from '../schema/datasetSchema.js';

/** The longest column name (Cassandra's limit for names, as `validateIdentifier` checks). */
const MAX_LENGTH = 48;
/** Put before a name that is a built-in column's: a source's `id` becomes `src_id`. */
const BUILT_IN_PREFIX = 'src_';
/** Put before a name that does not start with a letter: `2x` becomes `c_2x`. */
const NON_LETTER_PREFIX = 'c_';

/**
 * The metadata column name a source's field or column name maps to, or undefined when it maps
 * to none (a name without a letter or digit). Public datasets use names that are no valid
 * column names (LAION's `NSFW`, `original-width`, `caption.en`); refusing them made such
 * datasets impossible to ingest without rewriting them. The name is lower-cased, each run of
 * characters other than `a-z`, `0-9` and `_` becomes one `_`, leading and trailing `_` are
 * dropped, `c_` is put before a name that does not start with a letter, the result is cut to
 * 48 characters, and a built-in column's name (`id`, `label`, `source_key`, `size_bytes`) gets
 * `src_` before it: `NSFW` -> `nsfw`, `caption.en` -> `caption_en`, `2x` -> `c_2x`, `ID` ->
 * `src_id`. A valid column name maps to itself unless it is a built-in one.
 */
export function metadataColumnName(original: string): string | undefined {
  const core = original
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (core === '') return undefined;
  const name = (/^[a-z]/.test(core) ? core : NON_LETTER_PREFIX + core).slice(0, MAX_LENGTH);
  return Object.hasOwn(BUILT_IN_METADATA_COLUMNS, name) ? BUILT_IN_PREFIX + name : name;
}

/** What {@link metadataColumnNames} makes of a source's names. */
export interface MetadataColumnNames {
  /** Each original name that maps to a column name, and that name. */
  names: Map<string, string>;
  /** A sentence per name that maps to none, and per column name that several names map to. */
  problems: string[];
}

/**
 * Maps all the metadata names of one source (see {@link metadataColumnName}) and says which
 * cannot be columns: a name that maps to none, and names that map to the same column (`NSFW`
 * and `nsfw`), since two fields in one column would mix their values. `describe` names an
 * original in the problems (default: quoted), e.g. with where it was found.
 */
export function metadataColumnNames(
  originals: Iterable<string>,
  describe: (original: string) => string = (original) => JSON.stringify(original),
): MetadataColumnNames {
  const names = new Map<string, string>();
  const problems: string[] = [];
  const byColumn = new Map<string, string[]>();
  for (const original of new Set(originals)) {
    const name = metadataColumnName(original);
    if (name === undefined) {
      problems.push(`${describe(original)} maps to no column name (it has no letter or digit)`);
      continue;
    }
    names.set(original, name);
    const sharing = byColumn.get(name);
    if (sharing) sharing.push(original);
    else byColumn.set(name, [original]);
  }
  for (const [name, sharing] of [...byColumn].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (sharing.length < 2) continue;
    const listed = sharing.map(describe);
    const both = sharing.length === 2 ? 'both' : 'all';
    problems.push(
      `${listed.slice(0, -1).join(', ')} and ${listed.at(-1)!} ${both} map to metadata column ` +
        name,
    );
  }
  return { names, problems };
}
