import { invalidArgument } from '../../errors/LoaderError.js';
import type { ColumnType } from '../../schema/columnTypes.js';
import {
  type IngestShard,
  type IngestSource,
  type ListedSource,
  refuseRepeatedKeys,
  shardEntries,
} from '../IngestSource.js';
import { type NameOption, ownOptionName } from '../nameOption.js';
import { imageFolderFormat } from './imageFolderFormat.js';
import { type IngestFormat, takesSeveral } from './IngestFormat.js';
import { manifestFormat } from './manifestFormat.js';
import { parquetFormat } from './parquetFormat.js';
import { webDatasetFormat } from './webDatasetFormat.js';

/**
 * Every format `ingest` reads, in the order its help lists them. The CLI's flags, its "give
 * exactly one source" check and the benchmarks' ways in are made from this list.
 */
export const INGEST_FORMATS: readonly IngestFormat[] = [
  imageFolderFormat,
  manifestFormat,
  webDatasetFormat,
  parquetFormat,
];

/** The format of that name; an unknown name is INVALID_ARGUMENT listing the known ones. */
export function ingestFormat(name: string): IngestFormat {
  const format = INGEST_FORMATS.find((f) => f.name === name);
  if (!format) {
    throw invalidArgument(
      `unknown ingest format ${JSON.stringify(name)}; the formats are ` +
        INGEST_FORMATS.map((f) => f.name).join(', '),
    );
  }
  return format;
}

/** Options of {@link openIngestFormat}. */
export interface OpenIngestFormatOptions {
  /** The format's own options by name (see {@link IngestFormat.options}). */
  options?: Readonly<Record<string, string | undefined>>;
  /** Metadata column types by column name, for a format that takes them. */
  declaredTypes?: Record<string, ColumnType>;
  /** This process's part of the source: `index` of `count`. */
  shard?: IngestShard;
  /** How messages name an option (default: its name; the CLI passes one giving its flags). */
  nameOption?: NameOption;
  /** Read the source as unlabelled, whatever labels it has (see `IngestFormatContext`). */
  ignoreLabels?: boolean;
}

/**
 * Opens `input` as a source of the format `format` (a name of {@link INGEST_FORMATS}, or a
 * format), this process's shard of it: a listed format's entries are checked for a repeated
 * source key over the whole list, then dealt out; another format reads its part itself.
 * Options the format does not take, or several inputs to a format that takes one, are
 * INVALID_ARGUMENT.
 */
export async function openIngestFormat(
  format: string | IngestFormat,
  input: string | readonly string[],
  options: OpenIngestFormatOptions = {},
): Promise<IngestSource> {
  const f = typeof format === 'string' ? ingestFormat(format) : format;
  const name = options.nameOption ?? ownOptionName;
  const given = options.options ?? {};
  for (const key of Object.keys(given)) {
    if (given[key] !== undefined && !f.options.some((o) => o.name === key)) {
      throw invalidArgument(
        `format ${f.name} takes no option ${name(key)}` +
          (f.options.length > 0
            ? `; its options: ${f.options.map((o) => name(o.name)).join(', ')}`
            : ''),
      );
    }
  }
  const labelOption = Object.keys(given).find((k) => given[k] !== undefined && /^label/.test(k));
  if (options.ignoreLabels && labelOption !== undefined) {
    throw invalidArgument(
      `give ${name('ignoreLabels')} or ${name(labelOption)}, not both: ${name('ignoreLabels')} ` +
        'stores every sample without a label',
    );
  }
  let value: string | string[];
  if (takesSeveral(f.input)) {
    value = [input].flat();
  } else if (typeof input === 'string') {
    value = input;
  } else if (input.length === 1) {
    value = input[0]!;
  } else {
    throw invalidArgument(`${name(f.input.name)} takes one ${f.input.value}, not ${input.length}`);
  }
  const context = {
    values: given,
    declaredTypes: f.declaresTypes ? (options.declaredTypes ?? {}) : {},
    nameOption: name,
    ...(options.ignoreLabels ? { ignoreLabels: true } : {}),
  };
  if (f.sharding === 'own') {
    return f.open(value, { ...context, ...(options.shard ? { shard: options.shard } : {}) });
  }
  const source = await f.open(value, context);
  if (!('entries' in source)) {
    throw new Error(`format ${f.name} is sharded by entries but did not list them`);
  }
  const listed = source as ListedSource;
  // Checked over the whole source: a key listed twice could otherwise land in two shards.
  refuseRepeatedKeys(listed.entries);
  listed.entries = shardEntries(listed.entries, options.shard);
  return listed;
}
