import type cassandra from 'cassandra-driver';
import { scanTokenRanges } from '../db/scanTokenRanges.js';
import { invalidArgument } from '../errors/LoaderError.js';
import { metadataColumnTypes } from '../schema/datasetSchema.js';
import { quoteIdentifier, validateIdentifier } from '../schema/identifiers.js';
import { compileFilter } from './compileFilter.js';
import type { MetadataFilter } from './MetadataFilter.js';
import type { SplitInput } from './SplitInput.js';

/**
 * Reads what a split needs from the metadata table (id, label, the group-by and filter
 * columns) with a parallel token-range scan, keeps the rows every filter accepts, and returns
 * them in columns, sorted by id so the result does not depend on the scan's order. Without
 * group-by columns every sample is its own group.
 */
export async function readSplitInput(
  client: cassandra.Client,
  dataset: string,
  options: {
    groupBy: string[];
    filters: MetadataFilter[];
    onProgress?: (rows: number) => void;
    signal?: AbortSignal;
  },
): Promise<SplitInput> {
  const types = await metadataColumnTypes(client, dataset);
  const known = [...types.keys()].filter((c) => c !== 'id').sort();
  for (const c of [...options.groupBy, ...options.filters.map((f) => f.column)]) {
    validateIdentifier(c, 'metadata column');
    if (!types.has(c)) {
      throw invalidArgument(
        `dataset ${dataset} has no metadata column ${c}; its columns: ${known.join(', ')}`,
      );
    }
  }
  const predicates = options.filters.map((f) => ({
    column: f.column,
    test: compileFilter(f, types.get(f.column)),
  }));
  const columns = [
    ...new Set(['id', 'label', ...options.groupBy, ...options.filters.map((f) => f.column)]),
  ];

  const rows: Array<{ id: Buffer; label: number; group: string }> = [];
  let scanned = 0;
  await scanTokenRanges(client, {
    keyspace: dataset,
    table: 'metadata',
    columns: columns.map(quoteIdentifier),
    signal: options.signal,
    onRows: (page) => {
      for (const r of page) {
        if (!predicates.every((p) => p.test(r[p.column]))) continue;
        // A copy: a view would keep the driver's whole response page alive (copyBuffer: false).
        const id = Buffer.from((r['id'] as cassandra.types.Uuid).getBuffer());
        const group =
          options.groupBy.length === 0
            ? ''
            : options.groupBy.map((c) => (r[c] === null ? '\u2205' : String(r[c]))).join('\u0000');
        rows.push({ id, label: (r['label'] as number | null) ?? -1, group });
      }
      scanned += page.length;
      options.onProgress?.(scanned);
    },
  });
  rows.sort((a, b) => Buffer.compare(a.id, b.id));

  const ids = Buffer.allocUnsafe(rows.length * 16);
  const labels = new Int32Array(rows.length);
  const groups = new Int32Array(rows.length);
  const groupIndex = new Map<string, number>();
  rows.forEach((r, i) => {
    r.id.copy(ids, i * 16);
    labels[i] = r.label;
    if (options.groupBy.length === 0) {
      groups[i] = i;
    } else {
      let g = groupIndex.get(r.group);
      if (g === undefined) groupIndex.set(r.group, (g = groupIndex.size));
      groups[i] = g;
    }
  });
  return {
    count: rows.length,
    ids,
    labels,
    groups,
    groupCount: options.groupBy.length === 0 ? rows.length : groupIndex.size,
  };
}
