import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import { parseSplitRef } from '../../src/core/splits/splitNames.js';

describe('parseSplitRef', () => {
  it('reads all, set/part and set@version/part', () => {
    expect(parseSplitRef('all')).toEqual({ kind: 'all' });
    expect(parseSplitRef('main/train')).toEqual({
      kind: 'part',
      set: 'main',
      version: undefined,
      part: 'train',
    });
    expect(parseSplitRef(`cv@${2 ** 31 - 1}/val-3`)).toMatchObject({ version: 2 ** 31 - 1 });
  });

  it('refuses a version past CQL int as INVALID_ARGUMENT (found by fuzzing: it was INTERNAL)', () => {
    for (const v of [String(2 ** 31), '99999999999999999999']) {
      let err: unknown;
      try {
        parseSplitRef(`main@${v}/train`);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(LoaderError);
      expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
      expect((err as LoaderError).message).toMatch(/version .* is over the largest/);
    }
  });
});
