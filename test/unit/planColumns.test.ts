import { describe, expect, it } from 'vitest';
import { planColumns } from '../../src/core/columns/planColumns.js';
import { validateColumnNames } from '../../src/core/columns/validateColumnNames.js';

describe('validateColumnNames', () => {
  it('takes column names and source_key', () => {
    expect(validateColumnNames(['caption', 'source_key', 'index', 'c_2x'])).toEqual([
      'caption',
      'source_key',
      'index',
      'c_2x',
    ]);
  });
  it('refuses bad, built-in, repeated and too many names with the column named', () => {
    expect(() => validateColumnNames(['Caption'])).toThrow(
      /"Caption" is not a metadata column name/,
    );
    expect(() => validateColumnNames(['a-b'])).toThrow(/"a-b" is not/);
    expect(() => validateColumnNames(['label'])).toThrow(
      /"label" is in every batch already \(Batch.labels\)/,
    );
    expect(() => validateColumnNames(['x', 'x'])).toThrow(/columns names "x" twice/);
    expect(() => validateColumnNames(Array.from({ length: 65 }, (_, i) => `c${i}`))).toThrow(
      /at most 64/,
    );
  });
});

describe('planColumns', () => {
  const a = { dataset: 'a', columns: { caption: 'text', n: 'int' } };
  const b = { dataset: 'b', columns: { caption: 'text', score: 'double' } };

  it('types each column and says which source has it', () => {
    const plan = planColumns(['source_key', 'n', 'score', 'caption'], [a, b]);
    expect(plan.columns).toEqual([
      { name: 'source_key', type: 'text' },
      { name: 'n', type: 'int' },
      { name: 'score', type: 'double' },
      { name: 'caption', type: 'text' },
    ]);
    expect(plan.present).toEqual([
      ['source_key', 'n', 'caption'],
      ['source_key', 'score', 'caption'],
    ]);
  });

  it('refuses a column no source has, naming it and what there is', () => {
    expect(() => planColumns(['nope'], [a])).toThrow(
      /column "nope" is not in dataset a; the columns a stream can return are source_key, caption, n/,
    );
    expect(() => planColumns(['nope'], [a, b])).toThrow(/not in any source's dataset \(a, b\)/);
  });

  it('refuses a column of two types', () => {
    const c = { dataset: 'c', columns: { n: 'text' } };
    expect(() => planColumns(['n'], [a, c])).toThrow(/different types .*int in a; text in c/);
  });
});
