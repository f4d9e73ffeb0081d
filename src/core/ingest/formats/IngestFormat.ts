import type { ColumnType } from '../../schema/columnTypes.js';
import type { IngestShard, IngestSource } from '../IngestSource.js';
import type { NameOption } from '../nameOption.js';

/**
 * An option an ingest format takes. Its `name` is the key of the options object a library
 * caller passes; the CLI's flag is the name in kebab case (`imageColumn` -> `--image-column`),
 * with `value` and `description` as its help.
 */
export interface IngestFormatOption {
  /** camelCase, e.g. `imageColumn`. */
  name: string;
  /** The value as help shows it, e.g. `<name>`; ending in `...>` takes several (`<file...>`). */
  value: string;
  /** One line of help. */
  description: string;
}

/** What {@link IngestFormat.open} gets besides the input. */
export interface IngestFormatContext {
  /** The format's own options (those of {@link IngestFormat.options}) that were given. */
  values: Readonly<Record<string, string | undefined>>;
  /** Metadata column types declared by column name (formats with `declaresTypes`). */
  declaredTypes: Record<string, ColumnType>;
  /**
   * This process's part of the source, for formats that shard themselves
   * (`sharding: 'own'`); a listed format gets none, its entries are dealt out after listing.
   */
  shard?: IngestShard;
  /** How messages name an option. */
  nameOption: NameOption;
  /**
   * Store every sample without a label or label blob, whatever the source has: the source is
   * read as unlabelled (an ImageFolder root's files at any depth are samples).
   */
  ignoreLabels?: boolean;
}

/**
 * One way of reading samples from files into a dataset: its name, its input and options (the
 * CLI's flags are made from them), how it is sharded over several processes, and how it opens
 * the input (checking it: a missing file, a malformed header, a schema clash are errors
 * before any sample is read) into an {@link IngestSource} that reads the samples.
 *
 * A new format is a file defining one of these plus its line in `INGEST_FORMATS`
 * (`ingestFormats.ts`): `scylla-loader ingest` and the benchmarks take it from there.
 */
export interface IngestFormat {
  /** Short name, lower case: `imagefolder`, `manifest`, `webdataset`, `parquet`. */
  name: string;
  /** What it reads, as a phrase of the command's help: `Parquet files`. */
  title: string;
  /** The option naming the input: the format's own flag (`--parquet <file...>`). */
  input: IngestFormatOption;
  /** Options only this format reads, besides the input. */
  options: readonly IngestFormatOption[];
  /** Whether metadata column types may be declared (`declaredTypes`, the CLI's `--column`). */
  declaresTypes: boolean;
  /**
   * How several processes split the source: `entries`, the format lists every sample up front
   * (a `ListedSource`) and each process takes every n-th after a repeated key is refused
   * over the whole list; `own`, the format reads only its part itself (whole files, row
   * groups...), given {@link IngestFormatContext.shard}.
   */
  sharding: 'entries' | 'own';
  /**
   * Checks the input and opens it as a source. `input` is a list when
   * {@link IngestFormat.input}'s value takes several, else one string.
   */
  open(input: string | string[], context: IngestFormatContext): Promise<IngestSource>;
}

/** Whether an option takes several values (`<file...>`). */
export function takesSeveral(option: IngestFormatOption): boolean {
  return option.value.endsWith('...>');
}
