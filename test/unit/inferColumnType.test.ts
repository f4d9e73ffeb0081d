import { describe, expect, it } from 'vitest';
import { convertValue } from '../../src/core/ingest/convertValue.js';
import { inferColumnType } from '../../src/core/ingest/inferColumnType.js';

describe('inferColumnType', () => {
  it('infers from CSV strings, ignoring empty values', () => {
    expect(inferColumnType(['1', '2', '', '-3'])).toBe('int');
    expect(inferColumnType(['1', '3000000000'])).toBe('bigint');
    expect(inferColumnType(['1', '2.5', '1e3'])).toBe('double');
    expect(inferColumnType(['true', 'false', ''])).toBe('boolean');
    expect(inferColumnType(['p001', '17'])).toBe('text');
    expect(inferColumnType(['', ''])).toBe('text');
  });

  it('infers from JSON values', () => {
    expect(inferColumnType([1, 2, null])).toBe('int');
    expect(inferColumnType([1, 2.5])).toBe('double');
    expect(inferColumnType([true, false])).toBe('boolean');
    expect(inferColumnType(['a', 1])).toBe('text');
  });
});

describe('convertValue', () => {
  const where = { origin: 'm.csv:3', column: 'x' };
  it('converts to the declared type', () => {
    expect(convertValue('42', 'int', where)).toBe(42);
    expect(convertValue('9007199254740993', 'bigint', where)).toBe(9007199254740993n);
    expect(convertValue('2.5', 'double', where)).toBe(2.5);
    expect(convertValue('true', 'boolean', where)).toBe(true);
    expect(convertValue(7, 'text', where)).toBe('7');
    expect(convertValue('', 'int', where)).toBeNull();
  });

  it('names the place and column of a value that does not fit', () => {
    expect(() => convertValue('4.5', 'int', where)).toThrow(/m\.csv:3: column x is declared int/);
    expect(() => convertValue('3000000000', 'int', where)).toThrow(/declared int/);
    expect(() => convertValue('abc', 'double', where)).toThrow(/declared double/);
    expect(() => convertValue('yes', 'boolean', where)).toThrow(/declared boolean/);
  });
});
