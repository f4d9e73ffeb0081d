import { invalidArgument } from '../errors/LoaderError.js';
import type { ColumnType } from '../schema/columnTypes.js';
import type { MetadataValue } from './IngestEntry.js';

/**
 * Converts a raw manifest value to a column's type; empty values become null. Throws
 * INVALID_ARGUMENT naming the place and column when the value does not fit.
 */
export function convertValue(
  raw: unknown,
  type: ColumnType,
  where: { origin: string; column: string },
): MetadataValue {
  if (raw === null || raw === undefined || raw === '') return null;
  const s = typeof raw === 'string' ? raw.trim() : raw;
  const fail = (): never => {
    throw invalidArgument(
      `${where.origin}: column ${where.column} is declared ${type}, but has value ` +
        `${JSON.stringify(raw)}`,
    );
  };
  switch (type) {
    case 'text':
      return typeof raw === 'string' ? raw : JSON.stringify(raw);
    case 'boolean':
      if (s === true || s === 'true') return true;
      if (s === false || s === 'false') return false;
      return fail();
    case 'int': {
      const n = Number(s);
      if (typeof s === 'boolean' || !Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31) {
        return fail();
      }
      return n;
    }
    case 'bigint': {
      if (typeof s === 'number' && Number.isSafeInteger(s)) return BigInt(s);
      if (typeof s === 'string' && /^[+-]?\d+$/.test(s)) {
        const n = BigInt(s);
        if (n >= -(2n ** 63n) && n < 2n ** 63n) return n;
      }
      return fail();
    }
    case 'double': {
      const n = Number(s);
      if (typeof s === 'boolean' || !Number.isFinite(n) || s === '') return fail();
      return n;
    }
  }
}
