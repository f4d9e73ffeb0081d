import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import { quoteIdentifier, validateIdentifier } from '../../src/core/schema/identifiers.js';

describe('validateIdentifier', () => {
  it.each(['mnist', 'a', 'patient_id', 'x1', 'a'.repeat(48)])('accepts %s', (name) => {
    expect(validateIdentifier(name, 'dataset')).toBe(name);
  });

  it('lets a column, but not a dataset, be a reserved word (columns are quoted)', () => {
    expect(validateIdentifier('index', 'metadata column')).toBe('index');
    expect(quoteIdentifier('index')).toBe('"index"');
    expect(() => validateIdentifier('index', 'dataset')).toThrow(/reserved CQL keyword/);
  });

  it.each([
    ['', 'empty'],
    ['1abc', 'starts with a digit'],
    ['_abc', 'starts with an underscore'],
    ['MNIST', 'upper case'],
    ['my-data', 'hyphen'],
    ['a b', 'space'],
    ['a'.repeat(49), 'too long'],
    ['x; DROP KEYSPACE y', 'injection'],
    ['select', 'reserved word'],
    ['system_auth', 'system prefix'],
  ])('rejects %j (%s) with INVALID_ARGUMENT and the rule', (name) => {
    let caught: unknown;
    try {
      validateIdentifier(name, 'dataset');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(LoaderError);
    expect((caught as LoaderError).code).toBe('INVALID_ARGUMENT');
    expect((caught as LoaderError).message).toContain('invalid dataset name');
  });

  it('cuts a name far past the limit in its message (a request may carry megabytes)', () => {
    const name = 'd'.repeat(5_000_000);
    expect(() => validateIdentifier(name, 'dataset')).toThrow(
      /^invalid dataset name "d{64}"\.\.\. \(5000000 characters\): use 1 to 48 characters/,
    );
    let message = '';
    try {
      validateIdentifier(name, 'dataset');
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.length).toBeLessThan(300);
  });
});
