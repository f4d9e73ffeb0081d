import type { ColumnType } from '../schema/columnTypes.js';

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INTEGER = /^[+-]?\d+$/;
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * Infers a metadata column's type from its raw values (strings from CSV, JSON values from
 * JSONL), ignoring empty ones: boolean if every value is true/false, int if every value is an
 * integer in 32 bits, bigint if every value is an integer, double if every value is a number,
 * text otherwise (and for a column with no values at all).
 */
export function inferColumnType(values: Iterable<unknown>): ColumnType {
  let allBool = true;
  let allInt32 = true;
  let allInt = true;
  let allNumber = true;
  let seen = false;
  for (const v of values) {
    if (v === null || v === undefined || v === '') continue;
    seen = true;
    const s = typeof v === 'string' ? v.trim() : v;
    if (!(typeof s === 'boolean' || s === 'true' || s === 'false')) allBool = false;
    const isNumber =
      (typeof s === 'number' && Number.isFinite(s)) || (typeof s === 'string' && NUMBER.test(s));
    const isInt =
      (typeof s === 'number' && Number.isInteger(s)) || (typeof s === 'string' && INTEGER.test(s));
    if (!isNumber) allNumber = false;
    if (!isInt) allInt = false;
    if (!isInt || Number(s) < INT32_MIN || Number(s) > INT32_MAX) allInt32 = false;
  }
  if (!seen) return 'text';
  if (allBool) return 'boolean';
  if (allInt32) return 'int';
  if (allInt) return 'bigint';
  if (allNumber) return 'double';
  return 'text';
}
