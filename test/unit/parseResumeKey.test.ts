import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseResumeKey } from '../../src/core/resume/parseResumeKey.js';
import { LoaderError } from '../../src/core/errors/LoaderError.js';

describe('parseResumeKey', () => {
  it('decodes hex and base64 (standard and URL-safe) to the same bytes', () => {
    const key = randomBytes(32);
    expect(parseResumeKey(key.toString('hex'))).toEqual(key);
    expect(parseResumeKey(key.toString('hex').toUpperCase())).toEqual(key);
    expect(parseResumeKey(key.toString('base64'))).toEqual(key);
    expect(parseResumeKey(key.toString('base64url'))).toEqual(key);
    const long = randomBytes(64);
    expect(parseResumeKey(`${long.toString('base64')}\n`)).toEqual(long);
  });

  it('refuses keys shorter than 32 bytes or not hex/base64, with INVALID_ARGUMENT', () => {
    for (const bad of [
      randomBytes(31).toString('hex'),
      randomBytes(31).toString('base64'),
      'correct horse battery staple correct horse battery',
      `${randomBytes(32).toString('hex')}0`, // odd number of hex digits
      `${randomBytes(32).toString('base64').slice(0, -2)}!`,
    ]) {
      let caught: unknown;
      try {
        parseResumeKey(bad);
      } catch (err) {
        caught = err;
      }
      expect(caught, bad).toBeInstanceOf(LoaderError);
      expect((caught as LoaderError).code).toBe('INVALID_ARGUMENT');
      expect((caught as LoaderError).message).toMatch(/at least 32 bytes.*openssl rand -hex 32/);
    }
  });
});
