import type { Column__Output } from '../generated/scylla_loader/v1/Column.js';
import type { DecodedColumn } from './DecodedColumn.js';

const TYPES = {
  COLUMN_TYPE_TEXT: 'text',
  COLUMN_TYPE_INT: 'int',
  COLUMN_TYPE_BIGINT: 'bigint',
  COLUMN_TYPE_DOUBLE: 'double',
  COLUMN_TYPE_BOOLEAN: 'boolean',
} as const;

/**
 * A batch's `columns` by name, each with exactly `n` values in the field of its type (see
 * {@link DecodedColumn}); a column of another length, an unknown type or a null bitmap of the
 * wrong size is refused through `fail` (the batch is malformed).
 *
 * @internal
 */
export function decodeColumns(
  columns: readonly Column__Output[],
  n: number,
  fail: (message: string) => never,
): Record<string, DecodedColumn> {
  const out: Record<string, DecodedColumn> = {};
  for (const c of columns) {
    const type = (TYPES as Record<string, DecodedColumn['type'] | undefined>)[c.type];
    if (type === undefined) fail(`column ${c.name} of unknown type ${c.type}`);
    const nulls = c.nulls.length > 0 ? Uint8Array.from(c.nulls) : undefined;
    if (nulls && nulls.length !== Math.ceil(n / 8)) {
      fail(`column ${c.name}: a null bitmap of ${nulls.length} bytes for ${n} samples`);
    }
    const isNull = (i: number): boolean =>
      nulls !== undefined && (nulls[i >> 3]! & (1 << (i & 7))) !== 0;
    const count = (length: number): void => {
      if (length !== n) fail(`column ${c.name}: ${length} values for ${n} samples`);
    };
    let column: DecodedColumn;
    const common = { name: c.name, nulls };
    switch (type) {
      case 'text': {
        count(c.textValues.length);
        const values = c.textValues.map((v, i) => (isNull(i) ? null : v));
        column = { ...common, type, values, valueAt: (i) => values[i] ?? null };
        break;
      }
      case 'boolean': {
        count(c.booleanValues.length);
        const values = c.booleanValues.map((v, i) => (isNull(i) ? null : v));
        column = { ...common, type, values, valueAt: (i) => values[i] ?? null };
        break;
      }
      case 'int': {
        count(c.intValues.length);
        const values = Int32Array.from(c.intValues);
        column = { ...common, type, values, valueAt: (i) => (isNull(i) ? null : values[i]!) };
        break;
      }
      case 'bigint': {
        count(c.bigintValues.length);
        const values = BigInt64Array.from(c.bigintValues, (v) => BigInt(v));
        column = { ...common, type, values, valueAt: (i) => (isNull(i) ? null : values[i]!) };
        break;
      }
      case 'double': {
        count(c.doubleValues.length);
        const values = Float64Array.from(c.doubleValues);
        column = { ...common, type, values, valueAt: (i) => (isNull(i) ? null : values[i]!) };
        break;
      }
    }
    out[c.name] = column;
  }
  return out;
}
