import { invalidArgument } from '../errors/LoaderError.js';
import type { MetadataFilter } from './MetadataFilter.js';

const NUMERIC = new Set(['int', 'bigint', 'double', 'float', 'smallint', 'tinyint', 'varint']);

/**
 * Turns a filter into a predicate over a column's stored value. Equality and set membership
 * compare the value's text form (`"3"`, `"true"`, `"p001"`; a double 1.0 reads `"1"`, so
 * numeric columns also match numerically), ranges need a numeric column.
 */
export function compileFilter(
  filter: MetadataFilter,
  columnType: string | undefined,
): (value: unknown) => boolean {
  if (columnType === undefined) {
    throw invalidArgument(`filter names column ${filter.column}, which the metadata does not have`);
  }
  const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  const numeric = NUMERIC.has(columnType);
  const same = (v: unknown, want: string): boolean =>
    text(v) === want || (numeric && v !== null && want.trim() !== '' && Number(v) === Number(want));
  if ('equals' in filter) return (v) => same(v, filter.equals);
  if ('in' in filter) {
    const set = new Set(filter.in);
    return (v) => {
      const t = text(v);
      return t !== null && (set.has(t) || (numeric && filter.in.some((w) => same(v, w))));
    };
  }
  if (!numeric) {
    throw invalidArgument(
      `a range filter needs a numeric column; ${filter.column} is ${columnType} (use equals or in)`,
    );
  }
  const min = filter.min ?? -Infinity;
  const max = filter.max ?? Infinity;
  return (v) => {
    if (v === null || v === undefined) return false;
    const n = Number(v);
    return n >= min && n <= max;
  };
}
