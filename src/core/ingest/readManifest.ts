import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { invalidArgument, notFound } from '../errors/LoaderError.js';
import type { ColumnSpec, ColumnType } from '../schema/columnTypes.js';
import { validateIdentifier } from '../schema/identifiers.js';
import { convertValue } from './convertValue.js';
import { inferColumnType } from './inferColumnType.js';
import type { IngestEntry } from './IngestEntry.js';
import { listedSource, type ListedSource } from './IngestSource.js';

/** Manifest columns with a fixed meaning; every other column is a metadata column. */
export const MANIFEST_RESERVED = ['path', 'label', 'label_blob_path'] as const;

/** Options of {@link readManifest}. */
export interface ManifestOptions {
  /** Folder that relative paths in the manifest are resolved against (default: its folder). */
  root?: string;
  /** Declared column types; undeclared columns are inferred from their values. */
  declaredTypes?: Record<string, ColumnType>;
  /** Leave the label columns unread: every sample is unlabelled. Names the setting asking it. */
  ignoreLabels?: string;
}

interface RawRow {
  values: Record<string, unknown>;
  origin: string;
}

/**
 * Reads a CSV (header row) or JSONL (one object per line) manifest. Columns: `path` (required;
 * also the sample's source key), `label` (an integer, or a class name: names are sorted and
 * numbered from 0), `label_blob_path` (optional file whose bytes become the label blob; a
 * manifest with neither column is unlabelled, one with either needs one on every row), and
 * any metadata columns, typed as declared or inferred (see {@link inferColumnType}). A
 * malformed line is an INVALID_ARGUMENT error naming the file and line.
 */
export async function readManifest(
  file: string,
  options: ManifestOptions = {},
): Promise<ListedSource> {
  const abs = path.resolve(file);
  const text = await readFile(abs, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') throw notFound(`manifest ${abs} does not exist`);
    throw invalidArgument(`cannot read manifest ${abs}: ${err.message}`, err);
  });
  const rows = /\.jsonl?$/i.test(abs) ? parseJsonl(text, abs) : parseCsvRows(text, abs);
  if (rows.length === 0) throw invalidArgument(`manifest ${abs} has no rows`);

  const root = path.resolve(options.root ?? path.dirname(abs));
  const columnNames = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r.values)) columnNames.add(k);
  if (!columnNames.has('path')) {
    throw invalidArgument(`manifest ${abs} has no "path" column`);
  }
  // Without either column the manifest is unlabelled; with one, every row needs a label.
  const unlabelled =
    options.ignoreLabels !== undefined ||
    (!columnNames.has('label') && !columnNames.has('label_blob_path'));

  const columns: ColumnSpec[] = [];
  for (const name of [...columnNames].sort()) {
    if ((MANIFEST_RESERVED as readonly string[]).includes(name)) continue;
    validateIdentifier(name, 'metadata column');
    const type = options.declaredTypes?.[name] ?? inferColumnType(rows.map((r) => r.values[name]));
    columns.push({ name, type });
  }
  for (const declared of Object.keys(options.declaredTypes ?? {})) {
    if (!columnNames.has(declared)) {
      throw invalidArgument(`declared column ${declared} is not in manifest ${abs}`);
    }
  }

  const labelNames = unlabelled ? [] : labelNamesOf(rows);
  const labelIndex = new Map(labelNames.map((n, i) => [n, i]));
  const entries: IngestEntry[] = rows.map((r) => {
    const p = r.values['path'];
    if (typeof p !== 'string' || p.trim() === '') {
      throw invalidArgument(`${r.origin}: "path" is empty or not a string`);
    }
    const rawLabel = r.values['label'];
    let label: number | null = null;
    if (unlabelled) {
      // No label, no blob.
    } else if (rawLabel !== undefined && rawLabel !== null && rawLabel !== '') {
      label = labelNames.length > 0 ? labelIndex.get(String(rawLabel))! : Number(rawLabel);
    } else if (!unlabelled && !r.values['label_blob_path']) {
      throw invalidArgument(
        `${r.origin}: row has neither a label nor a label_blob_path (a manifest without ` +
          '"label" and "label_blob_path" columns is unlabelled; with them, every row needs one)',
      );
    }
    const blob = r.values['label_blob_path'];
    const metadata: IngestEntry['metadata'] = {};
    for (const c of columns) {
      metadata[c.name] = convertValue(r.values[c.name], c.type, {
        origin: r.origin,
        column: c.name,
      });
    }
    return {
      sourceKey: p,
      filePath: path.resolve(root, p),
      label,
      ...(!unlabelled && typeof blob === 'string' && blob !== ''
        ? { labelBlobPath: path.resolve(root, blob) }
        : {}),
      metadata,
      origin: r.origin,
    };
  });
  return listedSource({
    description: `manifest:${abs}`,
    entries,
    labelNames,
    columns,
    ...(unlabelled
      ? {
          unlabelled:
            options.ignoreLabels !== undefined
              ? `labels ignored (${options.ignoreLabels})`
              : `manifest ${abs} has no "label" or "label_blob_path" column`,
        }
      : {}),
  });
}

/** Integer labels stay as they are; any other label makes every label a class name. */
function labelNamesOf(rows: RawRow[]): string[] {
  const labels = rows
    .map((r) => r.values['label'])
    .filter((v) => v !== undefined && v !== null && v !== '');
  const allInts = labels.every((v) => {
    const n = Number(v);
    return Number.isInteger(n) && n >= 0 && n < 2 ** 31 && String(v).trim() !== '';
  });
  if (allInts) return [];
  return [...new Set(labels.map(String))].sort();
}

function parseCsvRows(text: string, file: string): RawRow[] {
  try {
    const records = parseCsv(text, {
      columns: true,
      skip_empty_lines: true,
      trim: true,
      bom: true,
      info: true,
    }) as Array<{ record: Record<string, string>; info: { lines: number } }>;
    return records.map(({ record, info }) => ({
      values: record,
      origin: `${file}:${info.lines}`,
    }));
  } catch (err) {
    throw invalidArgument(`malformed CSV manifest ${file}: ${(err as Error).message}`, err);
  }
}

function parseJsonl(text: string, file: string): RawRow[] {
  const rows: RawRow[] = [];
  const lines = text.split('\n');
  for (const [i, line] of lines.entries()) {
    if (line.trim() === '') continue;
    const origin = `${file}:${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw invalidArgument(`${origin}: malformed JSON line: ${(err as Error).message}`, err);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw invalidArgument(`${origin}: each line must be a JSON object`);
    }
    rows.push({ values: value as Record<string, unknown>, origin });
  }
  return rows;
}
