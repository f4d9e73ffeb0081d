import { invalidArgument } from '../errors/LoaderError.js';
import type { ColumnSpec } from '../schema/columnTypes.js';
import type { IngestEntry } from './IngestEntry.js';

/**
 * A source of samples, with what must be known before the first write: the class names (a
 * label's number is its name's index) and the metadata columns. Samples are read as they are
 * asked for, so a source of any size ingests in bounded memory.
 */
export interface IngestSource {
  /** A short description stored with the dataset (e.g. `imagefolder:/data/pets`). */
  description: string;
  /** Class names by label index; empty when labels are plain integers. */
  labelNames: string[];
  /** User metadata columns with their types. */
  columns: ColumnSpec[];
  /**
   * Set when no sample of the source has a label or a label blob (an ImageFolder root without
   * class folders, a manifest without `label` and `label_blob_path` columns, WebDataset shards
   * without label members or fields, Parquet files without a label column): why, with how to
   * name the labels if the source does have them elsewhere, for the ingest's report. The
   * samples are stored without labels. In a source where some samples have one, a sample
   * without either is bad.
   */
  unlabelled?: string;
  /** How many samples {@link IngestSource.samples} yields, when known before reading. */
  readonly total?: number;
  /** The samples, in source order (of this process's shard). */
  samples(): AsyncIterable<IngestEntry>;
}

/** A source whose entries are listed up front (ImageFolder, a manifest, generated data). */
export interface ListedSource extends IngestSource {
  entries: IngestEntry[];
  readonly total: number;
}

/** Which part of a source one of several processes ingests: `index` of `count` (`--shard i/n`). */
export interface IngestShard {
  index: number;
  count: number;
}

/** A listed source over `entries` (read at iteration, so the list may be replaced). */
export function listedSource(fields: Omit<ListedSource, 'samples' | 'total'>): ListedSource {
  return {
    ...fields,
    get total() {
      return this.entries.length;
    },
    async *samples() {
      yield* this.entries;
    },
  };
}

/** The entries of one shard: every `count`-th from `index`. */
export function shardEntries<T>(entries: T[], shard: IngestShard | undefined): T[] {
  if (!shard || shard.count === 1) return entries;
  return entries.filter((_, i) => i % shard.count === shard.index);
}

/**
 * Parses a shard given as `i/n` (0 <= i < n <= 1024); `name` is what a message calls the
 * setting (the CLI passes its flag).
 */
export function parseShard(spec: string, name = 'shard'): IngestShard {
  const m = /^(\d+)\/(\d+)$/.exec(spec.trim());
  const index = Number(m?.[1]);
  const count = Number(m?.[2]);
  if (!m || count < 1 || count > 1024 || index >= count) {
    throw invalidArgument(
      `${name} ${spec}: use i/n with 0 <= i < n <= 1024 (e.g. 0/4 for the first of four processes)`,
    );
  }
  return { index, count };
}

/** Refuses a listed source that names one source key twice (before any sharding). */
export function refuseRepeatedKeys(entries: readonly IngestEntry[]): void {
  const seen = new Map<string, string>();
  for (const e of entries) {
    const prev = seen.get(e.sourceKey);
    if (prev !== undefined) {
      throw invalidArgument(`${e.origin}: path ${e.sourceKey} is listed twice (also at ${prev})`);
    }
    seen.set(e.sourceKey, e.origin);
  }
}
