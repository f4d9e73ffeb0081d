import { constants, createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import braces from 'braces';
import { extract as extractTar, type ExtractEvents } from 'tar-stream';
import { invalidArgument, notFound } from '../errors/LoaderError.js';
import type { ColumnSpec, ColumnType } from '../schema/columnTypes.js';
import { convertValue } from './convertValue.js';
import { inferColumnType } from './inferColumnType.js';
import type { IngestEntry, MetadataValue } from './IngestEntry.js';
import type { IngestShard, IngestSource } from './IngestSource.js';
import { metadataColumnNames } from './metadataColumnName.js';
import { type NameOption, ownOptionName } from './nameOption.js';
import { MAX_SAMPLE_BYTES } from './sampleProblem.js';

/** Options of {@link readWebDataset}. */
export interface WebDatasetOptions {
  /**
   * This process's part: whole tar files `index`, `index + count`, ... when there are at least
   * `count` files, else every `count`-th member group (counted over all files in order).
   */
  shard?: IngestShard;
  /** The `.json` member's field holding the label when there is no .cls/.label member. */
  labelField?: string;
  /**
   * Metadata column types, by column name (the name a `.json` field maps to, e.g. `nsfw` for
   * `NSFW`); undeclared columns are inferred from their values.
   */
  declaredTypes?: Record<string, ColumnType>;
  /** How messages name an option (default: its name; the CLI passes one giving its flags). */
  nameOption?: NameOption;
  /** Store every sample without a label or label blob, whatever members it has. */
  ignoreLabels?: boolean;
}

/** Extensions of the image member, in order of preference (compared in lower case). */
const IMAGE_EXTENSIONS = ['jpg', 'jpeg', 'png', 'webp', 'gif', 'bmp', 'tif', 'tiff', 'ppm', 'pgm'];
/** Extensions of a member holding the label as text, in order of preference. */
const LABEL_EXTENSIONS = ['cls', 'label'];
/**
 * The extension of a caption member, and the metadata column it becomes. Public WebDataset
 * corpora (LAION, CC3M/CC12M, DataComp) put a caption there, not a class name: read as a
 * label, it made one class per caption.
 */
const CAPTION = 'txt';
/** Extensions of a member whose bytes become the label blob, in order of preference. */
const BLOB_EXTENSIONS = ['labelblob', 'mask.png', 'seg.png'];
const GZIP = /\.(tar\.gz|tgz)$/i;
/** Tar files a brace pattern may expand to (braces refuses more than 1000 by default). */
const MAX_FILES = 1_000_000;
const NO_IMAGE = `no image member (${IMAGE_EXTENSIONS.map((e) => `.${e}`).join(', ')})`;

/**
 * Reads WebDataset shards: tar files (`.tar`, or gzipped `.tar.gz`/`.tgz`) named literally or by
 * brace patterns such as `data/shard-{000000..000009}.tar` (zero padding kept). Consecutive
 * members sharing a key (the path up to the first dot of the base name: `dir/000123.jpg` and
 * `dir/000123.cls` are sample `dir/000123`) make one sample:
 *
 * - the image: the first of .jpg, .jpeg, .png, .webp, .gif, .bmp, .tif, .tiff, .ppm, .pgm the
 *   group has, in that order (extensions in any case);
 * - the label: a `.cls` or `.label` member (text, in that order), else the `labelField` field
 *   of the `.json` member. Integer labels stay integers; if any label is not one, labels are
 *   class names, sorted and numbered from 0 as ImageFolder does;
 * - the label blob: a `.labelblob`, `.mask.png` or `.seg.png` member (a sample with one needs
 *   no label). Shards where no sample has a label or a label blob (image-text pairs such as
 *   `key.jpg` + `key.txt` + `key.json`) are an unlabelled dataset; where some sample has one,
 *   a sample without either is bad;
 * - metadata: a `.txt` member (a caption) as the text column `txt`, and the other string,
 *   number and boolean fields of the `.json` member (nested values are ignored), typed as
 *   declared or inferred (see {@link inferColumnType}), in columns named by mapping the field
 *   names (see {@link metadataColumnNames}: `NSFW` -> `nsfw`, `caption.en` -> `caption_en`).
 *
 * Other members are ignored. A sample's source key is `<tar base name>/<key>`. Class names and
 * column types must be known before the first write, so a first pass reads the label and
 * `.json` members of every file (of all shards, so that every process agrees on them) and
 * drains the rest; the samples are then read in a second pass, one member group in memory at a
 * time. Bad data never throws: a group without an image or a label, a key repeated apart from
 * its group, or a damaged tar (one entry after the samples before the damage; the next file is
 * read on) becomes an entry with an `error`. A missing file is NOT_FOUND; `.json` field names
 * that map to no column name or to the same one (`NSFW` and `nsfw`), or to `txt` in a dataset
 * with `.txt` members, are INVALID_ARGUMENT, both before any sample is read.
 */
export async function readWebDataset(
  patterns: string[],
  options: WebDatasetOptions = {},
): Promise<IngestSource> {
  const files = await expandPatterns(patterns);
  const shard = options.shard ?? { index: 0, count: 1 };
  if (!(shard.count >= 1 && shard.index >= 0 && shard.index < shard.count)) {
    throw invalidArgument(`shard ${shard.index}/${shard.count}: use 0 <= index < count`);
  }
  const byFile = files.length >= shard.count;
  const owns = (file: number, group: number): boolean =>
    (byFile ? file : group) % shard.count === shard.index;
  const labelField = options.labelField ?? 'label';

  const survey = await surveyFiles(files, labelField, owns);
  const ignore = options.ignoreLabels === true;
  const labelNames = ignore ? [] : labelNamesOf(survey.labels);
  const columns = columnsOf(survey, options.declaredTypes ?? {}, files);
  const columnOf = survey.columnOf;
  const labelIndex = new Map(labelNames.map((n, i) => [n, i]));
  const labelled = !ignore && (survey.labels.size > 0 || survey.blobs);
  const optionName = options.nameOption ?? ownOptionName;
  const more = files.length > 1 ? `(+${files.length - 1} more)` : '';

  return {
    description: `webdataset:${files[0]}${more}`,
    labelNames,
    columns,
    ...(labelled
      ? {}
      : {
          unlabelled: ignore
            ? `labels ignored (${optionName('ignoreLabels')})`
            : 'no sample has a .cls or .label member, a .json field ' +
              `${JSON.stringify(labelField)} or a label blob member ` +
              `(${optionName('labelField')} <name> names another field)`,
        }),
    total: survey.total,
    async *samples() {
      let next = 0;
      for (const [i, file] of files.entries()) {
        if (byFile && !owns(i, 0)) continue;
        const base = path.basename(file);
        for await (const event of readTar(file, next, (g) => owns(i, g), wantedInSamples)) {
          next = event.index + 1;
          if (!owns(i, event.index)) continue;
          const sourceKey = `${base}/${event.key}`;
          const origin = `${file}:${event.key}`;
          const made =
            event.kind === 'damage'
              ? event.message
              : makeSample(event, {
                  labelField,
                  labelled,
                  labelNames,
                  labelIndex,
                  columns,
                  columnOf,
                  origin,
                });
          yield typeof made === 'string'
            ? { sourceKey, label: null, metadata: {}, origin, error: made }
            : { sourceKey, origin, ...made };
        }
      }
    },
  };
}

/** What the first pass learns. @internal */
interface Survey {
  /** Every label seen, as text. */
  labels: Set<string>;
  /** Whether some group has a label blob member. */
  blobs: boolean;
  /** Per metadata field (by its name in the `.json`), one value of each type it infers as. */
  fields: Map<string, Map<ColumnType, unknown>>;
  /** Per metadata field, the `.json` member it was first seen in (for messages). */
  firstIn: Map<string, string>;
  /** Per metadata field, its column's name. */
  columnOf: Map<string, string>;
  /** The first `.txt` member (a caption), if any: its presence is enough, the column is text. */
  caption?: string;
  /** How many entries this process's {@link IngestSource.samples} will yield. */
  total: number;
}

/** The first pass: labels and metadata fields of all files; entries of this process. */
async function surveyFiles(
  files: string[],
  labelField: string,
  owns: (file: number, group: number) => boolean,
): Promise<Survey> {
  const survey: Survey = {
    labels: new Set(),
    blobs: false,
    fields: new Map(),
    firstIn: new Map(),
    columnOf: new Map(),
    total: 0,
  };
  let next = 0;
  for (const [i, file] of files.entries()) {
    for await (const event of readTar(file, next, () => true, wantedInSurvey)) {
      next = event.index + 1;
      if (owns(i, event.index)) survey.total++;
      if (event.kind === 'damage') continue;
      // Not yet knowing whether the dataset is labelled, a group without a label is let pass.
      const parsed = parseGroup(event, labelField, false);
      if (typeof parsed === 'string') continue;
      if (parsed.label !== undefined) survey.labels.add(parsed.label);
      if (parsed.blobExt !== undefined) survey.blobs = true;
      if (parsed.caption && survey.caption === undefined) {
        survey.caption = `${file}:${event.key}.${CAPTION}`;
        nameColumns(survey);
      }
      for (const [name, value] of Object.entries(parsed.fields)) {
        let seen = survey.fields.get(name);
        if (!seen) {
          survey.fields.set(name, (seen = new Map()));
          survey.firstIn.set(name, `${file}:${event.key}.json`);
          // At once, not after the pass: a survey of a large dataset takes long.
          nameColumns(survey);
        }
        // A column's inferred type depends only on which types its single values have, so
        // one value of each stands for them all (memory bounded whatever the sample count).
        const type = inferColumnType([value]);
        if (!seen.has(type)) seen.set(type, value);
      }
    }
  }
  return survey;
}

/**
 * Maps the `.json` fields seen so far to column names, or refuses those that map to none, to
 * one column between them, or to the captions' column.
 */
function nameColumns(survey: Survey): void {
  const { names, problems } = metadataColumnNames(
    survey.firstIn.keys(),
    (field) => `.json field ${JSON.stringify(field)} (first in ${survey.firstIn.get(field)})`,
  );
  if (problems.length > 0) {
    throw invalidArgument(
      `${problems.join('; ')}; a field's column name is its name in lower case, each run of ` +
        'characters other than a-z, 0-9 and _ made one _ (see docs/ingest.md, WebDataset)',
    );
  }
  const caption = [...names].find(([, column]) => column === CAPTION)?.[0];
  if (caption !== undefined && survey.caption !== undefined) {
    throw invalidArgument(
      `.${CAPTION} members (captions, first ${survey.caption}) and the .json field ` +
        `${JSON.stringify(caption)} (first in ${survey.firstIn.get(caption)}) would both be ` +
        `metadata column ${CAPTION}; a dataset may have one or the other`,
    );
  }
  survey.columnOf = names;
}

/** Integer labels stay as they are; any other label makes every label a class name. */
function labelNamesOf(labels: Set<string>): string[] {
  const allInts = [...labels].every((l) => /^\d+$/.test(l) && Number(l) < 2 ** 31);
  return allInts ? [] : [...labels].sort();
}

function columnsOf(
  survey: Survey,
  declared: Record<string, ColumnType>,
  files: string[],
): ColumnSpec[] {
  const columns = [...survey.columnOf].map(([field, name]) => ({
    name,
    type: declared[name] ?? inferColumnType(survey.fields.get(field)!.values()),
  }));
  for (const name of Object.keys(declared)) {
    if (columns.some((c) => c.name === name) || (name === CAPTION && survey.caption)) continue;
    const mapped = survey.columnOf.get(name);
    throw invalidArgument(
      mapped !== undefined
        ? `declared column ${name}: the .json field ${name} is metadata column ${mapped}; ` +
            `declare ${mapped}`
        : `declared column ${name} is in no .json member (nor is it a .${CAPTION} caption) of ` +
            files[0] +
            (files.length > 1 ? ` or the ${files.length - 1} other files` : ''),
    );
  }
  if (survey.caption !== undefined) {
    columns.push({ name: CAPTION, type: declared[CAPTION] ?? 'text' });
  }
  return columns.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

interface SampleContext {
  labelField: string;
  /** Some sample of the dataset has a label or a label blob: every sample needs one. */
  labelled: boolean;
  labelNames: string[];
  labelIndex: Map<string, number>;
  columns: ColumnSpec[];
  /** Per `.json` field, its column's name. */
  columnOf: Map<string, string>;
  origin: string;
}

/** A group's sample, or why it cannot be one. */
function makeSample(
  group: GroupEvent,
  ctx: SampleContext,
): Pick<IngestEntry, 'data' | 'label' | 'labelBlob' | 'metadata'> | string {
  const parsed = parseGroup(group, ctx.labelField, ctx.labelled);
  if (typeof parsed === 'string') return parsed;
  let label: number | null = null;
  if (ctx.labelled && parsed.label !== undefined) {
    if (ctx.labelNames.length === 0) label = Number(parsed.label);
    else {
      const index = ctx.labelIndex.get(parsed.label);
      if (index === undefined) {
        return `label ${JSON.stringify(parsed.label)} was not there when the file was first read`;
      }
      label = index;
    }
  }
  const metadata: Record<string, MetadataValue> = {};
  // Values by column name. A field the first pass did not see (the file changed since) has no
  // column and is left out, like any field beyond the columns.
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(parsed.fields)) {
    const column = ctx.columnOf.get(field);
    if (column !== undefined) fields[column] = value;
  }
  if (parsed.caption) fields[CAPTION] = group.members.get(CAPTION)?.toString('utf8');
  try {
    for (const c of ctx.columns) {
      metadata[c.name] = convertValue(fields[c.name], c.type, {
        origin: ctx.origin,
        column: c.name,
      });
    }
  } catch (err) {
    return (err as Error).message;
  }
  const blob =
    ctx.labelled && parsed.blobExt !== undefined ? group.members.get(parsed.blobExt) : undefined;
  return {
    data: group.members.get(parsed.imageExt) ?? Buffer.alloc(0),
    label,
    ...(blob ? { labelBlob: blob } : {}),
    metadata,
  };
}

/** The parts of a member group, with the label as text. @internal */
interface ParsedGroup {
  imageExt: string;
  label?: string;
  blobExt?: string;
  /** Whether the group has a `.txt` member (a caption). */
  caption: boolean;
  /** The `.json` member's scalar fields other than the label field. */
  fields: Record<string, string | number | boolean>;
}

/**
 * Reads a group's label and fields (from members read in both passes), or why it is bad; in a
 * `labelled` dataset a group without a label and a label blob is bad.
 */
function parseGroup(
  group: GroupEvent,
  labelField: string,
  labelled: boolean,
): ParsedGroup | string {
  if (group.problem !== undefined) return group.problem;
  const { members } = group;
  const imageExt = IMAGE_EXTENSIONS.find((e) => members.has(e));
  if (imageExt === undefined) return NO_IMAGE;
  let json: Record<string, unknown> = {};
  const jsonText = members.get('json');
  if (jsonText) {
    try {
      const value: unknown = JSON.parse(jsonText.toString('utf8'));
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        return 'the .json member is not a JSON object';
      }
      json = value as Record<string, unknown>;
    } catch (err) {
      return `malformed .json member: ${(err as Error).message}`;
    }
  }
  let label: string | undefined;
  const labelExt = LABEL_EXTENSIONS.find((e) => members.has(e));
  if (labelExt !== undefined) {
    label = members.get(labelExt)!.toString('utf8').trim();
  } else {
    const raw = json[labelField];
    if (typeof raw === 'string') label = raw.trim();
    else if (typeof raw === 'number') label = String(raw);
    else if (raw !== undefined && raw !== null) {
      return `the .json member's field ${JSON.stringify(labelField)} is neither text nor a number`;
    }
  }
  if (label === '') label = undefined;
  const blobExt = BLOB_EXTENSIONS.find((e) => members.has(e));
  if (labelled && label === undefined && blobExt === undefined) {
    return (
      `no label (a .cls or .label member, or a field ${JSON.stringify(labelField)} ` +
      'of the .json member) and no label blob, though other samples have one (shards where ' +
      'no sample has a label ingest as an unlabelled dataset)'
    );
  }
  // No prototype: a field called __proto__ (a column proto) is a field like any other.
  const fields = Object.create(null) as ParsedGroup['fields'];
  for (const [name, value] of Object.entries(json)) {
    if (name === labelField) continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      fields[name] = value;
    }
  }
  return {
    imageExt,
    ...(label !== undefined ? { label } : {}),
    ...(blobExt !== undefined ? { blobExt } : {}),
    caption: members.has(CAPTION),
    fields,
  };
}

const wantedInSurvey = (ext: string): boolean => ext === 'json' || LABEL_EXTENSIONS.includes(ext);
// Captions are read in the second pass only: the first needs to know that they exist.
const wantedInSamples = (ext: string): boolean =>
  wantedInSurvey(ext) ||
  ext === CAPTION ||
  IMAGE_EXTENSIONS.includes(ext) ||
  BLOB_EXTENSIONS.includes(ext);

/** One member group of a tar. @internal */
interface GroupEvent {
  kind: 'group';
  /** Position among the groups of all files read so far (sharding counts by it). */
  index: number;
  key: string;
  /** Members by lower-case extension; the bytes of those read (else null). */
  members: Map<string, Buffer | null>;
  /** Why the group cannot be a sample, found while reading it. */
  problem?: string;
}

/** The tar could not be read on: counts as one group, the one it broke off in. @internal */
interface DamageEvent {
  kind: 'damage';
  index: number;
  key: string;
  message: string;
}

/**
 * The member groups of one tar file, numbered from `first`, as a stream: only the current
 * group's members are in memory, and the file is read no faster than groups are taken. The
 * bodies of members `wanted` (by extension) in groups `kept` (by number) are read, others
 * drained. A read that breaks off ends with one {@link DamageEvent}.
 */
async function* readTar(
  file: string,
  first: number,
  kept: (index: number) => boolean,
  wanted: (ext: string) => boolean,
): AsyncGenerator<GroupEvent | DamageEvent> {
  // 1 MiB reads: the default 64 KiB means sixteen times the chunks to hand through.
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  const gunzip = GZIP.test(file) ? createGunzip() : undefined;
  const extract = extractTar();
  // pipe() does not pass errors on: a read or gunzip error ends the extraction with it.
  const fail = (err: Error): void => void extract.destroy(err);
  input.on('error', fail);
  gunzip?.on('error', fail);
  (gunzip ? input.pipe(gunzip) : input).pipe(extract);

  const seen = new Set<string>();
  let group: GroupEvent | undefined;
  let index = first;
  const base = path.basename(file);
  try {
    for await (const entry of extract) {
      const { name, type, size } = entry.header;
      const member = type === 'file' || type === 'contiguous-file' ? splitName(name) : undefined;
      if (member === undefined) {
        await readBody(entry, false);
        continue;
      }
      if (group !== undefined && group.key !== member.key) {
        yield group;
        group = undefined;
        index++;
      }
      if (group === undefined) {
        group = { kind: 'group', index, key: member.key, members: new Map() };
        if (seen.has(member.key)) {
          group.problem =
            `member key repeated: members of ${member.key} also appear earlier in ${base}, ` +
            'apart from these (a sample must be consecutive members)';
        }
        seen.add(member.key);
      }
      if (group.members.has(member.ext)) {
        group.problem ??= `member ${name} appears twice`;
      }
      if (size > MAX_SAMPLE_BYTES && wantedInSamples(member.ext)) {
        group.problem ??= `member ${name} is ${size} bytes, over the limit of ${MAX_SAMPLE_BYTES} bytes per sample`;
      }
      const read = group.problem === undefined && kept(group.index) && wanted(member.ext);
      group.members.set(member.ext, await readBody(entry, read));
    }
    if (group !== undefined) yield group;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    const where = group ? `in the members of ${group.key}` : 'before its first member';
    yield {
      kind: 'damage',
      index: group?.index ?? index,
      key: group?.key ?? '',
      message: `${file} is damaged ${where}: ${why}; the rest of this file is skipped`,
    };
  } finally {
    extract.destroy();
    gunzip?.destroy();
    input.destroy();
  }
}

/** A tar member's header and body stream. @internal */
type TarMember = ExtractEvents['entry'][1];

/** A member's body (copied out of the read buffers), or null after draining it. */
async function readBody(entry: TarMember, keep: boolean): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  // Read to its end even when not kept: a member stream stopped early ends the whole tar.
  // Chunks are Buffers: streamx makes them with b4a, which is Buffer on Node.
  for await (const chunk of entry as AsyncIterable<Buffer>) if (keep) chunks.push(chunk);
  return keep ? Buffer.concat(chunks) : null;
}

/**
 * A member name's sample key and lower-case extension (WebDataset's rule: the key is the path
 * up to the first dot of the base name), or undefined for a name without one.
 */
function splitName(name: string): { key: string; ext: string } | undefined {
  const clean = name.replace(/^(\.\/)+/, '');
  const slash = clean.lastIndexOf('/');
  const baseName = clean.slice(slash + 1);
  const dot = baseName.indexOf('.');
  if (dot <= 0 || dot === baseName.length - 1) return undefined;
  return {
    key: clean.slice(0, slash + 1) + baseName.slice(0, dot),
    ext: baseName.slice(dot + 1).toLowerCase(),
  };
}

/** Expands brace patterns to tar files, each checked to exist and be readable. */
async function expandPatterns(patterns: string[]): Promise<string[]> {
  if (patterns.length === 0) throw invalidArgument('give at least one WebDataset tar file');
  const files: string[] = [];
  for (const pattern of patterns) {
    let expanded: string[];
    try {
      expanded = braces(pattern, { expand: true, rangeLimit: MAX_FILES });
    } catch (err) {
      throw invalidArgument(`WebDataset pattern ${pattern}: ${(err as Error).message}`, err);
    }
    files.push(...expanded.map((f) => path.resolve(f)));
  }
  const byBase = new Map<string, string>();
  for (const file of files) {
    const other = byBase.get(path.basename(file));
    if (other !== undefined) {
      throw invalidArgument(
        other === file
          ? `WebDataset file ${file} is given twice`
          : `WebDataset files ${other} and ${file} have the same name; source keys ` +
              '(<file name>/<member key>) would collide',
      );
    }
    byBase.set(path.basename(file), file);
  }
  for (const file of files) {
    const info = await stat(file).catch(() => null);
    if (!info) throw notFound(`WebDataset file ${file} does not exist`);
    if (!info.isFile()) throw invalidArgument(`WebDataset file ${file} is not a file`);
    await access(file, constants.R_OK).catch((err: unknown) => {
      throw invalidArgument(`cannot read WebDataset file ${file}: ${(err as Error).message}`, err);
    });
  }
  return files;
}
