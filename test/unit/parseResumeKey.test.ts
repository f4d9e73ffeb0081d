import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseResumeKey } from '../../src/core/resume/parseResumeKey.js';
import { parseResumeKeys } from '../../src/core/resume/parseResumeKeys.js';
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

describe('parseResumeKeys', () => {
  it('reads one key as parseResumeKey does', () => {
    const key = randomBytes(32);
    expect(parseResumeKeys(key.toString('hex'))).toEqual([key]);
    expect(parseResumeKeys(`${key.toString('base64')}\n`)).toEqual([key]);
  });

  it('reads the current key then previous ones, comma-separated, in any encoding', () => {
    const [current, previous, older] = [randomBytes(32), randomBytes(48), randomBytes(32)];
    const text = ` ${current.toString('hex')}, ${previous.toString('base64')} ,${older.toString('base64url')}\n`;
    expect(parseResumeKeys(text)).toEqual([current, previous, older]);
  });

  it('names the position of a bad or empty entry, never its text', () => {
    const good = randomBytes(32).toString('hex');
    const short = randomBytes(8).toString('hex');
    expect(() => parseResumeKeys(`${good},${short}`)).toThrow(
      /^key 2 of 2 in resumeKey must be at least 32 bytes/,
    );
    let message = '';
    try {
      parseResumeKeys(`${good},${short}`);
    } catch (err) {
      message = (err as LoaderError).message;
    }
    expect(message).not.toContain(short);
    expect(message).not.toContain(good);
    expect(() => parseResumeKeys(`${good},`)).toThrow(/key 2 of 2 .* is empty/);
    expect(() => parseResumeKeys(`,${good}`)).toThrow(/key 1 of 2 .* is empty/);
    // A single bad key keeps parseResumeKey's message.
    expect(() => parseResumeKeys(short)).toThrow(/^resumeKey must be at least/);
    // The caller names the setting: the CLI by its variable.
    const names = { resumeKey: 'SCYLLA_LOADER_RESUME_KEY' };
    expect(() => parseResumeKeys(short, names)).toThrow(/^SCYLLA_LOADER_RESUME_KEY must be/);
    expect(() => parseResumeKeys(`${good},${short}`, names)).toThrow(
      /^key 2 of 2 in SCYLLA_LOADER_RESUME_KEY must be at least 32 bytes/,
    );
  });
});
