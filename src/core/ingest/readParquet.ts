import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import {
  parquetMetadataAsync,
  parquetReadObjects,
  parquetSchema,
  type AsyncBuffer,
  type FileMetaData,
  type SchemaElement,
  type SchemaTree,
} from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { LoaderError, invalidArgument, notFound } from '../errors/LoaderError.js';
import type { ColumnSpec, ColumnType } from '../schema/columnTypes.js';
import { checkParquetExtents } from './checkParquetExtents.js';
import { convertValue } from './convertValue.js';
import type { IngestEntry, MetadataValue } from './IngestEntry.js';
import type { IngestShard, IngestSource } from './IngestSource.js';
import { metadataColumnNames } from './metadataColumnName.js';
import { type NameOption, ownOptionName } from './nameOption.js';

/** Options of {@link readParquet}. */
export interface ParquetOptions {
  /**
   * This process's part: the row groups whose ordinal, counted over all files in the order
   * given, is `index` modulo `count`.
   */
  shard?: IngestShard;
  /**
   * The column holding the image bytes: a binary column, or a struct with a binary `bytes`
   * field (Hugging Face's Image feature, `{bytes, path}`). Default: the only such column (or
   * the only one Hugging Face's metadata marks as an Image).
   */
  imageColumn?: string;
  /** The label column. Default: the first of `label`, `labels`, `class`, `target` present. */
  labelColumn?: string;
  /**
   * A column whose value (string or integer, unique over all files) is each sample's source
   * key. Default: `<file name>:<row in file>`.
   */
  keyColumn?: string;
  /** A binary column whose bytes become each sample's label blob. */
  labelBlobColumn?: string;
  /**
   * Store every row without a label or label blob: no label column is looked for (a `label`
   * column is then a metadata column, `src_label`).
   */
  ignoreLabels?: boolean;
  /**
   * Metadata column types to use instead of those the Parquet types map to, by metadata column
   * name (the name a Parquet column maps to, e.g. `nsfw` for `NSFW`).
   */
  declaredTypes?: Record<string, ColumnType>;
  /** How messages name these options (default: as named here; the CLI gives its flags). */
  nameOption?: NameOption;
}

/** Column names tried, in order, when no label column is given. */
export const DEFAULT_LABEL_COLUMNS = ['label', 'labels', 'class', 'target'] as const;

/**
 * Reads Parquet files (Hugging Face datasets' format among others) as an ingest source, one
 * row group at a time through ranged reads of a file handle: memory holds the row group being
 * yielded and the next one, whatever the files' sizes.
 *
 * Columns: the image column (binary, or a `{bytes, path}` struct), the label column (integers
 * stay labels; strings are class names, sorted and numbered from 0; an integer column that
 * Hugging Face's `huggingface` key-value metadata describes as a ClassLabel takes its names),
 * optionally a key column and a label blob column (files with neither a label column nor a
 * label blob column are an unlabelled dataset). Every other column of a scalar type is a
 * metadata column: int32 (and smaller) as int, int64 and uint32 as bigint, float and double
 * as double, string as text, boolean as boolean, named by mapping the Parquet names (see
 * {@link metadataColumnNames}: `NSFW` -> `nsfw`, `caption.en` -> `caption_en`; names that map
 * to none or to one column between them are INVALID_ARGUMENT). Other columns (lists, maps,
 * other structs, dates, timestamps, decimals, uint64) are ignored.
 *
 * Up front, before any sample: every file's footer is read (a file that is not Parquet, or
 * whose schema differs from the first file's, is an INVALID_ARGUMENT error), and when the
 * labels are strings or a key column is given, that one column of every row group of every
 * file (all shards', so that every process numbers the classes alike and sees every key) is
 * read: columnar, so cheap.
 *
 * Bad data never ends the iteration: a row with a null image, or a null label and no label
 * blob, yields an entry with an `error`; a row group that fails to decode yields one entry
 * with an `error` naming the file, the row group and the decoder's message, and reading goes
 * on with the next row group.
 */
export async function readParquet(
  files: string[],
  options: ParquetOptions = {},
): Promise<IngestSource> {
  if (files.length === 0) throw invalidArgument('no Parquet file given');
  const parquetFiles: ParquetFile[] = [];
  for (const file of files) parquetFiles.push(await readFooter(file));
  const first = parquetFiles[0]!;
  for (const other of parquetFiles.slice(1)) checkSameSchema(first, other);
  if (options.keyColumn === undefined) {
    refuseRepeatedNames(parquetFiles, options.nameOption ?? ownOptionName);
  }

  const layout = planColumns(first, options);
  const groups = rowGroups(parquetFiles, options.shard);
  const textLabels = layout.label?.kind === 'text';
  const scanned =
    textLabels || layout.keyColumn !== undefined
      ? await scanLabelsAndKeys(parquetFiles, layout)
      : [];
  const labelNames = textLabels ? scanned : (layout.hfNames ?? []);
  const labelIndex = new Map(labelNames.map((n, i) => [n, i]));
  const total = groups.reduce((sum, g) => sum + (g.rowEnd - g.rowStart), 0);
  const more = parquetFiles.length > 1 ? ` (+${parquetFiles.length - 1} more)` : '';

  return {
    description: `parquet:${first.path}${more}`,
    labelNames,
    columns: layout.metadata.map(({ name, type }) => ({ name, type })),
    // Neither a label column nor a label blob column: the rows are samples without labels.
    ...(layout.label === undefined && layout.labelBlobColumn === undefined
      ? {
          unlabelled: options.ignoreLabels
            ? `labels ignored (${(options.nameOption ?? ownOptionName)('ignoreLabels')})`
            : `${first.path} has no label column (looked for ${DEFAULT_LABEL_COLUMNS.join(', ')}; ` +
              `${(options.nameOption ?? ownOptionName)('labelColumn')} <name> names another)`,
        }
      : {}),
    total,
    async *samples() {
      for (const file of parquetFiles) {
        const mine = groups.filter((g) => g.file === file);
        if (mine.length === 0) continue;
        yield* fileSamples(file, mine, layout, labelIndex);
      }
    },
  };
}

/** One file, its footer read. @internal */
interface ParquetFile {
  path: string;
  name: string;
  size: number;
  metadata: FileMetaData;
  schema: SchemaTree;
}

/** A row group of a file, rows `[rowStart, rowEnd)` of it. @internal */
interface RowGroupRef {
  file: ParquetFile;
  index: number;
  rowStart: number;
  rowEnd: number;
}

/** What a top-level column holds, as far as ingest is concerned. @internal */
type ColumnKind =
  | { kind: 'binary' }
  | { kind: 'image-struct' }
  | { kind: 'scalar'; type: ColumnType }
  | { kind: 'other'; what: string };

interface MetadataColumn extends ColumnSpec {
  /** The Parquet column's name (`name` is the metadata column's, which it maps to). */
  source: string;
  /** The Parquet type's own mapping, before a declared type. */
  natural: ColumnType;
}

/** Which columns are read, and as what. @internal */
interface ColumnLayout {
  image: { name: string; struct: boolean };
  label?: { name: string; kind: 'int' | 'text' };
  /** Hugging Face ClassLabel names of an integer label column. */
  hfNames?: string[];
  keyColumn?: string;
  labelBlobColumn?: string;
  metadata: MetadataColumn[];
  /** Every column read per row group. */
  read: string[];
}

async function readFooter(file: string): Promise<ParquetFile> {
  const abs = path.resolve(file);
  const handle = await open(abs, 'r').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw notFound(`Parquet file ${abs} does not exist`);
    throw invalidArgument(`cannot open Parquet file ${abs}: ${err.message}`, err);
  });
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw invalidArgument(`${abs} is not a file`);
    const footer = await parquetMetadataAsync(handleBuffer(handle, stats.size))
      .then((metadata) => ({ metadata, schema: parquetSchema(metadata) }))
      .catch((err: unknown) => {
        throw invalidArgument(
          `${abs} is not a Parquet file (or its footer is damaged): ${message(err)}`,
          err,
        );
      });
    checkParquetExtents(abs, stats.size, footer.metadata);
    return { path: abs, name: path.basename(abs), size: stats.size, ...footer };
  } finally {
    await handle.close();
  }
}

/**
 * An AsyncBuffer over an open file: each slice is one positioned read of just its bytes, so
 * hyparquet reads a footer or a row group's column chunks and nothing else. A range outside
 * the file is refused before its buffer is allocated: the ranges come from the file's footer
 * (checked up front by {@link checkParquetExtents}; this is the backstop for any hyparquet
 * computes from it).
 * @internal
 */
function handleBuffer(handle: FileHandle, size: number): AsyncBuffer {
  return {
    byteLength: size,
    async slice(start: number, end: number = size): Promise<ArrayBuffer> {
      if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end)) || start < 0 || end > size) {
        throw new Error(`bytes ${start} to ${end} are outside the file (${size} bytes)`);
      }
      const bytes = new Uint8Array(Math.max(0, end - start));
      let filled = 0;
      while (filled < bytes.length) {
        const { bytesRead } = await handle.read(
          bytes,
          filled,
          bytes.length - filled,
          start + filled,
        );
        if (bytesRead === 0) throw new Error(`file ends at byte ${start + filled}, before ${end}`);
        filled += bytesRead;
      }
      return bytes.buffer;
    },
  };
}

function checkSameSchema(first: ParquetFile, other: ParquetFile): void {
  const a = new Map(first.schema.children.map((c) => [c.element.name, describeTree(c)]));
  const b = new Map(other.schema.children.map((c) => [c.element.name, describeTree(c)]));
  const names = [...new Set([...a.keys(), ...b.keys()])];
  for (const name of names) {
    const x = a.get(name);
    const y = b.get(name);
    if (x === y) continue;
    const difference =
      x === undefined
        ? `column ${name} is only in ${other.path}`
        : y === undefined
          ? `column ${name} is missing from ${other.path}`
          : `column ${name} is ${x} in ${first.path} but ${y} in ${other.path}`;
    throw invalidArgument(
      `Parquet files ${first.path} and ${other.path} have different schemas (${difference}); ` +
        'all files of one ingest must share the first file’s schema',
    );
  }
}

/** A column's type, children included, as text (REQUIRED and OPTIONAL count as one). */
function describeTree(tree: SchemaTree): string {
  const e = tree.element;
  const parts = [e.type ?? 'group', e.converted_type, e.logical_type?.type];
  if (e.repetition_type === 'REPEATED') parts.push('repeated');
  const own = parts.filter(Boolean).join('/');
  if (tree.children.length === 0) return own;
  return `${own}{${tree.children.map((c) => `${c.element.name}:${describeTree(c)}`).join(',')}}`;
}

function refuseRepeatedNames(files: ParquetFile[], name: NameOption): void {
  const seen = new Map<string, string>();
  for (const f of files) {
    const prev = seen.get(f.name);
    if (prev !== undefined) {
      throw invalidArgument(
        `Parquet files ${prev} and ${f.path} have the same name, so their samples would get the ` +
          `same keys (<file name>:<row>); rename one, or pass ${name('keyColumn')} with a unique ` +
          'column',
      );
    }
    seen.set(f.name, f.path);
  }
}

function classify(tree: SchemaTree): ColumnKind {
  const e = tree.element;
  if (e.repetition_type === 'REPEATED') return { kind: 'other', what: 'a repeated field' };
  if (tree.children.length > 0) {
    if (e.converted_type === 'LIST' || e.logical_type?.type === 'LIST') {
      return { kind: 'other', what: 'a list' };
    }
    if (e.converted_type === 'MAP' || e.logical_type?.type === 'MAP') {
      return { kind: 'other', what: 'a map' };
    }
    const bytes = tree.children.find((c) => c.element.name === 'bytes');
    if (bytes && classify(bytes).kind === 'binary') return { kind: 'image-struct' };
    return { kind: 'other', what: 'a struct without a binary "bytes" field' };
  }
  const type = scalarType(e);
  if (type === 'binary') return { kind: 'binary' };
  if (type !== undefined) return { kind: 'scalar', type };
  const annotation = e.logical_type?.type ?? e.converted_type;
  return { kind: 'other', what: `${e.type}${annotation ? ` (${annotation})` : ''}` };
}

/** The column type a leaf maps to, 'binary' for raw bytes, undefined for anything else. */
function scalarType(e: SchemaElement): ColumnType | 'binary' | undefined {
  const logical = e.logical_type;
  const converted = e.converted_type;
  switch (e.type) {
    case 'BOOLEAN':
      return 'boolean';
    case 'FLOAT':
    case 'DOUBLE':
      return 'double';
    case 'INT32': {
      if (logical?.type === 'INTEGER') {
        return logical.isSigned || logical.bitWidth < 32 ? 'int' : 'bigint';
      }
      if (converted === 'UINT_32') return 'bigint';
      const ints = [undefined, 'INT_8', 'INT_16', 'INT_32', 'UINT_8', 'UINT_16'];
      return logical === undefined && ints.includes(converted) ? 'int' : undefined;
    }
    case 'INT64': {
      if (logical?.type === 'INTEGER') return logical.isSigned ? 'bigint' : undefined;
      return logical === undefined && (converted === undefined || converted === 'INT_64')
        ? 'bigint'
        : undefined;
    }
    case 'BYTE_ARRAY': {
      const text = ['STRING', 'ENUM', 'UTF8'];
      if (text.includes(logical?.type ?? '') || text.includes(converted ?? '')) return 'text';
      return logical === undefined && converted === undefined ? 'binary' : undefined;
    }
    case 'FIXED_LEN_BYTE_ARRAY':
      return logical?.type === 'FLOAT16' ? 'double' : undefined;
    default:
      return undefined;
  }
}

function planColumns(first: ParquetFile, options: ParquetOptions): ColumnLayout {
  const kinds = new Map(first.schema.children.map((c) => [c.element.name, classify(c)]));
  const optionName = options.nameOption ?? ownOptionName;
  const listing = (): string =>
    [...kinds].map(([name, k]) => `${name} (${describeKind(k)})`).join(', ') || 'none';
  const need = (name: string, option: string): ColumnKind => {
    const kind = kinds.get(name);
    if (!kind) {
      throw invalidArgument(
        `${option} ${name}: ${first.path} has no such column; its columns: ${listing()}`,
      );
    }
    return kind;
  };
  const features = huggingFaceFeatures(first.metadata);

  let labelBlobColumn: string | undefined;
  if (options.labelBlobColumn !== undefined) {
    labelBlobColumn = options.labelBlobColumn;
    if (need(labelBlobColumn, optionName('labelBlobColumn')).kind !== 'binary') {
      throw invalidArgument(
        `${optionName('labelBlobColumn')} ${labelBlobColumn} is ${describeKind(kinds.get(labelBlobColumn)!)}; ` +
          'a label blob column holds bytes (a Parquet binary column)',
      );
    }
  }

  let image: ColumnLayout['image'];
  if (options.imageColumn !== undefined) {
    const kind = need(options.imageColumn, optionName('imageColumn'));
    if (kind.kind !== 'binary' && kind.kind !== 'image-struct') {
      throw invalidArgument(
        `${optionName('imageColumn')} ${options.imageColumn} is ${describeKind(kind)}; the image column must ` +
          'be binary, or a struct with a binary "bytes" field (such as Hugging Face’s Image)',
      );
    }
    image = { name: options.imageColumn, struct: kind.kind === 'image-struct' };
  } else {
    const candidates = [...kinds]
      .filter(
        ([name, k]) =>
          name !== labelBlobColumn && (k.kind === 'binary' || k.kind === 'image-struct'),
      )
      .map(([name]) => name);
    const marked = candidates.filter((name) => features?.[name]?.['_type'] === 'Image');
    const chosen = marked.length === 1 ? marked : candidates;
    if (chosen.length !== 1) {
      throw invalidArgument(
        chosen.length === 0
          ? `${first.path} has no binary column (nor a struct with a binary "bytes" field) to ` +
              `take images from; its columns: ${listing()}`
          : `${first.path} has several columns that could hold the images ` +
              `(${chosen.join(', ')}); pass ${optionName('imageColumn')} <name>`,
      );
    }
    image = { name: chosen[0]!, struct: kinds.get(chosen[0]!)!.kind === 'image-struct' };
  }

  let label: ColumnLayout['label'];
  const labelName = options.ignoreLabels
    ? undefined
    : (options.labelColumn ?? DEFAULT_LABEL_COLUMNS.find((name) => kinds.has(name)));
  if (labelName !== undefined) {
    const kind = need(labelName, optionName('labelColumn'));
    const type = kind.kind === 'scalar' ? kind.type : undefined;
    if (type !== 'int' && type !== 'bigint' && type !== 'text') {
      throw invalidArgument(
        `label column ${labelName} is ${describeKind(kind)}; a label column holds integers or ` +
          `class names (strings); pass ${optionName('labelColumn')} <name> to use another column`,
      );
    }
    label = { name: labelName, kind: type === 'text' ? 'text' : 'int' };
  }
  const classLabel = label && features?.[label.name]?.['names'];
  const hfNames =
    label?.kind === 'int' &&
    Array.isArray(classLabel) &&
    classLabel.every((n): n is string => typeof n === 'string')
      ? classLabel
      : undefined;

  const keyColumn = options.keyColumn;
  if (keyColumn !== undefined) {
    const kind = need(keyColumn, optionName('keyColumn'));
    if (kind.kind !== 'scalar' || !['text', 'int', 'bigint'].includes(kind.type)) {
      throw invalidArgument(
        `${optionName('keyColumn')} ${keyColumn} is ${describeKind(kind)}; a key column holds strings or integers`,
      );
    }
  }

  const special = new Set([image.name, label?.name, keyColumn, labelBlobColumn]);
  const metadata = metadataColumns(first.path, kinds, special);
  for (const [name, type] of Object.entries(options.declaredTypes ?? {})) {
    const column = metadata.find((c) => c.name === name);
    if (column) {
      column.type = type;
      continue;
    }
    const kind = kinds.get(name);
    const mapped = metadata.find((c) => c.source === name)?.name;
    const columns = metadata.map((c) =>
      c.name === c.source ? c.name : `${c.name} (from ${c.source})`,
    );
    throw invalidArgument(
      `${optionName('declaredTypes')} ${name}:${type}: ` +
        (mapped !== undefined
          ? `column ${name} of ${first.path} is metadata column ${mapped}; declare ${mapped}`
          : kind === undefined
            ? `${first.path} has no metadata column ${name}; its metadata columns: ` +
              (columns.join(', ') || 'none')
            : `${name} is not a metadata column of ${first.path} ` +
              `(${special.has(name) ? 'it is the image, label, key or label blob column' : describeKind(kind)})`),
    );
  }

  const read = [...special, ...metadata.map((c) => c.source)].filter(
    (name): name is string => name !== undefined,
  );
  return {
    image,
    ...(label ? { label } : {}),
    ...(hfNames ? { hfNames } : {}),
    ...(keyColumn !== undefined ? { keyColumn } : {}),
    ...(labelBlobColumn !== undefined ? { labelBlobColumn } : {}),
    metadata,
    read,
  };
}

/**
 * The metadata columns: every scalar column other than the special ones, named as its name
 * maps (sorted by that name), its type the Parquet type's. Names that map to no column name,
 * or to one between them, are refused.
 */
function metadataColumns(
  file: string,
  kinds: Map<string, ColumnKind>,
  special: Set<string | undefined>,
): MetadataColumn[] {
  const scalars = new Map<string, ColumnType>();
  for (const [name, kind] of kinds) {
    if (!special.has(name) && kind.kind === 'scalar') scalars.set(name, kind.type);
  }
  const { names, problems } = metadataColumnNames(
    scalars.keys(),
    (name) => `column ${JSON.stringify(name)}`,
  );
  if (problems.length > 0) {
    throw invalidArgument(
      `${file}: ${problems.join('; ')} (a column's metadata column name is its name in lower ` +
        'case, each run of characters other than a-z, 0-9 and _ made one _); rename the column ' +
        '(e.g. with pyarrow: table.rename_columns(...), or the datasets library: ' +
        'dataset.rename_column(...)), or pick it as the image, label, key or label blob column',
    );
  }
  return [...scalars]
    .map(([source, type]) => ({ name: names.get(source)!, source, natural: type, type }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function describeKind(kind: ColumnKind): string {
  switch (kind.kind) {
    case 'binary':
      return 'binary';
    case 'image-struct':
      return 'a struct with binary bytes';
    case 'scalar':
      return kind.type;
    case 'other':
      return kind.what;
  }
}

/** The `features` of Hugging Face's `huggingface` key-value metadata, if any. */
function huggingFaceFeatures(
  metadata: FileMetaData,
): Record<string, Record<string, unknown> | undefined> | undefined {
  const raw = metadata.key_value_metadata?.find((kv) => kv.key === 'huggingface')?.value;
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as {
      info?: { features?: unknown };
      features?: unknown;
    } | null;
    const features = parsed?.info?.features ?? parsed?.features;
    return typeof features === 'object' && features !== null
      ? (features as Record<string, Record<string, unknown> | undefined>)
      : undefined;
  } catch {
    // Metadata written by another tool under that key: not ours to refuse.
    return undefined;
  }
}

/** Every row group of every file, in order, and which of them are this shard's. */
function rowGroups(files: ParquetFile[], shard: IngestShard | undefined): RowGroupRef[] {
  const out: RowGroupRef[] = [];
  let ordinal = 0;
  for (const file of files) {
    let rowStart = 0;
    for (const [index, group] of file.metadata.row_groups.entries()) {
      const rowEnd = rowStart + Number(group.num_rows);
      if (!shard || ordinal % shard.count === shard.index) {
        out.push({ file, index, rowStart, rowEnd });
      }
      ordinal++;
      rowStart = rowEnd;
    }
  }
  return out;
}

/**
 * The first pass, over every row group of every file (not only this shard's): reads just the
 * label column when it holds class names (returning them sorted) and the key column when one
 * is given (refusing a key that repeats). A row group that fails to decode is passed over
 * here; the samples pass reports it.
 */
async function scanLabelsAndKeys(files: ParquetFile[], layout: ColumnLayout): Promise<string[]> {
  const labelColumn = layout.label?.kind === 'text' ? layout.label.name : undefined;
  const { keyColumn } = layout;
  const columns = [labelColumn, keyColumn].filter((c): c is string => c !== undefined);
  const names = new Set<string>();
  // Key -> where it was seen, as file index * 2^32 + row (a number per key, not a string).
  const keys = new Map<string, number>();
  const place = (at: number): string =>
    `${files[Math.floor(at / 2 ** 32)]!.path}:row ${at % 2 ** 32}`;
  for (const [f, file] of files.entries()) {
    const handle = await open(file.path, 'r').catch(() => undefined);
    if (!handle) continue;
    try {
      const buffer = handleBuffer(handle, file.size);
      for (const ref of rowGroups([file], undefined)) {
        if (ref.rowEnd === ref.rowStart) continue;
        const rows = await readRows(buffer, file.metadata, columns, ref.rowStart, ref.rowEnd).catch(
          () => [],
        );
        for (const [i, row] of rows.entries()) {
          if (labelColumn !== undefined) {
            const name = textOf(row[labelColumn]);
            if (name !== undefined && name !== '') names.add(name);
          }
          if (keyColumn === undefined || row[keyColumn] == null) continue;
          const key = keyOf(row[keyColumn]);
          const at = f * 2 ** 32 + ref.rowStart + i;
          const prev = keys.get(key);
          if (prev !== undefined) {
            throw invalidArgument(
              `key column ${keyColumn} repeats ${JSON.stringify(key)} (${place(prev)} and ` +
                `${place(at)}); a key column must be unique, as each key names one sample`,
            );
          }
          keys.set(key, at);
        }
      }
    } finally {
      await handle.close();
    }
  }
  return [...names].sort();
}

function readRows(
  file: AsyncBuffer,
  metadata: FileMetaData,
  columns: string[],
  rowStart: number,
  rowEnd: number,
): Promise<Array<Record<string, unknown>>> {
  // utf8: false keeps unannotated BYTE_ARRAY columns (image bytes) as Uint8Array; STRING
  // columns are still decoded as strings.
  return parquetReadObjects({
    file,
    metadata,
    columns,
    rowStart,
    rowEnd,
    utf8: false,
    compressors,
  });
}

type GroupRows = { rows: Array<Record<string, unknown>> } | { error: string };

/**
 * One file's samples, a row group at a time, the next group read while the current one is
 * yielded (so at most two groups are in memory).
 */
async function* fileSamples(
  file: ParquetFile,
  groups: RowGroupRef[],
  layout: ColumnLayout,
  labelIndex: Map<string, number>,
): AsyncGenerator<IngestEntry> {
  let handle: FileHandle;
  try {
    handle = await open(file.path, 'r');
  } catch (err) {
    for (const g of groups) yield groupError(g, `could not be read: ${message(err)}`);
    return;
  }
  const buffer = handleBuffer(handle, file.size);
  const read = (g: RowGroupRef): Promise<GroupRows> =>
    g.rowEnd === g.rowStart
      ? Promise.resolve({ rows: [] })
      : readRows(buffer, file.metadata, layout.read, g.rowStart, g.rowEnd).then(
          (rows) => ({ rows }),
          (err: unknown) => ({ error: `could not be decoded: ${message(err)}` }),
        );
  let next: Promise<GroupRows> | undefined = read(groups[0]!);
  try {
    for (const [i, group] of groups.entries()) {
      const result: GroupRows = await next!;
      next = i + 1 < groups.length ? read(groups[i + 1]!) : undefined;
      if ('error' in result) {
        yield groupError(group, result.error);
        continue;
      }
      for (const [j, row] of result.rows.entries()) {
        yield rowEntry(file, group.rowStart + j, row, layout, labelIndex);
      }
    }
  } finally {
    // A read still under way when the consumer stops must end before its file closes.
    await next;
    await handle.close();
  }
}

function groupError(g: RowGroupRef, what: string): IngestEntry {
  const rows = `rows ${g.rowStart} to ${g.rowEnd - 1}`;
  return {
    sourceKey: `${g.file.name}:${g.rowStart}`,
    label: null,
    metadata: {},
    origin: `${g.file.path}:row group ${g.index}`,
    error: `row group ${g.index} (${rows}) of ${g.file.path} ${what}`,
  };
}

function rowEntry(
  file: ParquetFile,
  row: number,
  values: Record<string, unknown>,
  layout: ColumnLayout,
  labelIndex: Map<string, number>,
): IngestEntry {
  const origin = `${file.path}:row ${row}`;
  const rawKey = layout.keyColumn !== undefined ? values[layout.keyColumn] : undefined;
  const sourceKey = rawKey != null ? keyOf(rawKey) : `${file.name}:${row}`;
  const entry: IngestEntry = { sourceKey, label: null, metadata: {}, origin };
  const fail = (problem: string): IngestEntry => ({ ...entry, error: problem });
  if (layout.keyColumn !== undefined && rawKey == null) {
    return fail(`key column ${layout.keyColumn} is null`);
  }

  const cell = values[layout.image.name];
  const bytes = layout.image.struct
    ? (cell as { bytes?: unknown } | null | undefined)?.bytes
    : cell;
  if (!(bytes instanceof Uint8Array)) {
    if (cell == null) return fail(`image column ${layout.image.name} is null`);
    const stored = (cell as { path?: unknown }).path;
    return fail(
      `image column ${layout.image.name} has no bytes` +
        (typeof stored === 'string' ? ` (only a path, ${stored}, which is not read)` : ''),
    );
  }
  entry.data = asBuffer(bytes);

  if (layout.labelBlobColumn !== undefined) {
    const blob = values[layout.labelBlobColumn];
    if (blob instanceof Uint8Array) entry.labelBlob = asBuffer(blob);
  }
  if (layout.label) {
    const raw = values[layout.label.name];
    if (layout.label.kind === 'text') {
      const name = textOf(raw);
      if (name !== undefined && name !== '') entry.label = labelIndex.get(name) ?? null;
    } else if (typeof raw === 'number' || typeof raw === 'bigint') {
      entry.label = Number(raw);
    }
    if (entry.label === null && !entry.labelBlob) {
      return fail(`label column ${layout.label.name} is null`);
    }
  } else if (layout.labelBlobColumn !== undefined && !entry.labelBlob) {
    return fail(`label blob column ${layout.labelBlobColumn} is null`);
  }

  try {
    for (const c of layout.metadata) {
      entry.metadata[c.name] = metadataValue(values[c.source], c, origin);
    }
  } catch (err) {
    return fail(err instanceof LoaderError ? err.message : message(err));
  }
  return entry;
}

/** A cell as a metadata value of its column's type (a declared type converts it). */
function metadataValue(raw: unknown, column: MetadataColumn, origin: string): MetadataValue {
  if (raw === null || raw === undefined) return null;
  const value = raw instanceof Uint8Array ? textOf(raw)! : raw;
  if (column.type === column.natural) {
    if (column.type === 'bigint' && typeof value === 'number') return BigInt(value);
    return value as MetadataValue;
  }
  if (column.type === 'bigint' && typeof value === 'bigint') return value;
  return convertValue(typeof value === 'bigint' ? String(value) : value, column.type, {
    origin,
    column: column.name,
  });
}

function keyOf(raw: unknown): string {
  return textOf(raw) ?? String(raw);
}

function textOf(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw;
  if (raw instanceof Uint8Array) return Buffer.from(raw).toString('utf8');
  return undefined;
}

/** A Buffer over the same memory (no copy). */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
