import { describe, expect, it } from 'vitest';
import type { CreateSplitSetRequest } from '../../src/core/splits/createSplitSet.js';
import { splitRequestSchema } from '../../src/core/splits/splitRequestSchema.js';

const valid: CreateSplitSetRequest = {
  dataset: 'pathology',
  name: 'main',
  parts: [
    ['train', 7],
    ['val', 2],
    ['test', 1],
  ],
  folds: 0,
  groupBy: ['patient_id'],
  classTargets: { mode: 'ratios', ratios: { 0: 1, 1: 2 } },
  maxTotal: 1000,
  filters: [
    { column: 'site', equals: 'a' },
    { column: 'slide', in: ['1', '2'] },
    { column: 'x', min: 0 },
    { column: 'y', min: -1, max: 1 },
  ],
  seed: 2n ** 64n - 1n,
  newVersion: false,
  allowShortfall: true,
};

/** Each issue as `path: message`, the form clients and the CLI see. */
function issues(change: Partial<CreateSplitSetRequest>): string[] {
  const r = splitRequestSchema.safeParse({ ...valid, ...change });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('splitRequestSchema', () => {
  it('passes a valid request through unchanged, for parts and for folds', () => {
    expect(splitRequestSchema.parse(valid)).toEqual(valid);
    const folds = { ...valid, parts: [], folds: 5, classTargets: { mode: 'balanced' as const } };
    expect(splitRequestSchema.parse(folds)).toEqual(folds);
    // Equal min and max are one value, not an empty range.
    expect(issues({ filters: [{ column: 'x', min: 3, max: 3 }] })).toEqual([]);
  });

  it('refuses weights and class ratios that are not positive and finite', () => {
    expect(issues({ parts: [['train', 0]] })).toEqual([
      'parts.0.1: part train needs a positive weight, got 0',
    ]);
    expect(issues({ parts: [['train', -2]] })).toEqual([
      'parts.0.1: part train needs a positive weight, got -2',
    ]);
    for (const w of [Infinity, NaN]) {
      expect(issues({ parts: [['train', w]] })).toEqual([
        'parts.0.1: a part weight must be a finite number',
      ]);
    }
    expect(issues({ classTargets: { mode: 'ratios', ratios: { 0: 1, 1: 0 } } })).toEqual([
      'classTargets.ratios.1: class ratio of label 1 must be positive, got 0',
    ]);
    expect(issues({ classTargets: { mode: 'ratios', ratios: {} } })).toEqual([
      'classTargets.ratios: ratios must name at least one label (e.g. 0=1,1=1)',
    ]);
  });

  it('refuses repeated or reserved part names, and bad names of every kind', () => {
    expect(
      issues({
        parts: [
          ['train', 1],
          ['train', 2],
        ],
      }),
    ).toEqual(['parts.1.0: part train is named twice']);
    expect(issues({ parts: [['train-3', 1]] })).toEqual([
      'parts.0.0: part name train-3 is reserved for the views of k-fold sets; pick another',
    ]);
    expect(issues({ parts: [['Train', 1]] })[0]).toMatch(/^parts\.0\.0: invalid part name "Train"/);
    expect(issues({ name: 'a/b' })[0]).toMatch(/^name: invalid split set name "a\/b"/);
    expect(issues({ dataset: 'system_x' })[0]).toMatch(/^dataset: .*belong to the database/);
    expect(issues({ groupBy: ['patient_id', 'patient_id'] })).toEqual([
      'groupBy.1: group-by column patient_id is named twice',
    ]);
    expect(issues({ groupBy: ['Patient'] })[0]).toMatch(/^groupBy\.0: invalid metadata column/);
  });

  it('needs parts or 2 to 100 folds, not both', () => {
    expect(issues({ parts: [] })).toEqual([
      'parts: give the parts with their weights (e.g. train=7,val=2,test=1) or k >= 2 folds',
    ]);
    expect(issues({ folds: 3 })).toEqual(['folds: give either parts or folds, not both']);
    expect(issues({ parts: [], folds: 1 })).toEqual([
      'folds: k-fold needs at least 2 folds (0 means named parts)',
    ]);
    expect(issues({ parts: [], folds: 101 })).toEqual(['folds: folds is at most 100']);
    expect(issues({ parts: [], folds: 2.5 })).toEqual(['folds: folds must be an integer']);
  });

  it('refuses filters without exactly one condition, empty lists and empty ranges', () => {
    expect(issues({ filters: [{ column: 'x', min: 5, max: 1 }] })).toEqual([
      'filters.0.min: range min 5 is above max 1, so no sample would pass',
    ]);
    expect(issues({ filters: [{ column: 'x' }] })).toEqual([
      'filters.0: filter on x needs exactly one condition: equals, in, or a range with a min ' +
        'and/or a max',
    ]);
    const two = {
      column: 'x',
      equals: '1',
      in: ['2'],
    } as unknown as CreateSplitSetRequest['filters'][number];
    expect(issues({ filters: [two] })[0]).toMatch(/^filters\.0: filter on x needs exactly one/);
    expect(issues({ filters: [{ column: 'x', in: [] }] })).toEqual([
      'filters.0.in: "in" needs at least one value',
    ]);
    expect(issues({ filters: [{ column: 'x', min: NaN }] })).toEqual([
      'filters.0.min: range min must be a finite number',
    ]);
    expect(issues({ filters: [{ column: 'no such', equals: '1' }] })[0]).toMatch(
      /^filters\.0\.column: invalid metadata column name "no such"/,
    );
  });

  it('keeps the size cap and the seed within what they can mean', () => {
    expect(issues({ maxTotal: 0 })).toEqual(['maxTotal: max total must be at least 1']);
    expect(issues({ maxTotal: 1.5 })).toEqual(['maxTotal: max total must be an integer']);
    expect(issues({ maxTotal: 2 ** 60 })[0]).toMatch(/^maxTotal: max total is at most/);
    expect(issues({ seed: -1n })).toEqual(['seed: seed must not be negative']);
    expect(issues({ seed: 2n ** 64n })).toEqual([
      'seed: seed must fit in 64 bits (at most 2^64 - 1)',
    ]);
  });

  it('turns each kind of filter into exactly its condition', () => {
    const loose = { column: 'x', min: 1, max: undefined };
    expect(splitRequestSchema.parse({ ...valid, filters: [loose] }).filters).toEqual([
      { column: 'x', min: 1 },
    ]);
  });
});
