import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  type TokenBinding,
  decodeResumeToken,
  encodeResumeToken,
  jobFingerprint,
  NO_BASE,
  readResumeToken,
  requestFingerprint,
} from '../../src/core/resume/resumeToken.js';

const fields = {
  dataset: 'mnist',
  split: 'all',
  splitContentHash: 'abc',
  batchSize: 128,
  seed: 42n,
  firstEpoch: 0,
  epochs: 2,
  shardRule: 'uneven',
  shuffle: 'uniform',
  dropLast: false,
};
const key = randomBytes(32);
const owner = { rank: 1, worldSize: 4 };
const binding: TokenBinding = {
  job: jobFingerprint(fields),
  legacy: requestFingerprint({ ...fields, ...owner }),
  ...owner,
};

/** A version 1 token, as loaders before job checkpoints issued them. */
function v1Token(fingerprint: Buffer, epoch: number, low: number): Buffer {
  const body = Buffer.alloc(1 + 16 + 16);
  body.writeUInt8(1, 0);
  fingerprint.copy(body, 1);
  body.writeUInt32BE(epoch, 17);
  body.writeUInt32BE(low, 21);
  body.writeUInt32BE(3, 25);
  body.writeUInt32BE(0, 29);
  return Buffer.concat([body, createHmac('sha256', key).update(body).digest()]);
}

describe('resume token', () => {
  it('round-trips the state, the rank and world size in clear, and the base digest', () => {
    const state = {
      epoch: 1,
      low: 1000,
      deliveredAbove: [1001, 1007, 1008, 2000],
      nextBatchIndex: 9,
    };
    const read = decodeResumeToken(key, binding, encodeResumeToken(key, binding, state));
    expect(read.state).toEqual(state);
    expect(read.owner).toEqual(owner);
    expect(read.base.equals(NO_BASE)).toBe(true);
    const base = randomBytes(16);
    const empty = { epoch: 0, low: 0, deliveredAbove: [], nextBatchIndex: 0 };
    const withBase = readResumeToken(key, encodeResumeToken(key, { ...binding, base }, empty));
    expect(withBase.state).toEqual(empty);
    expect(withBase.base.equals(base)).toBe(true);
  });

  it('still reads version 1 tokens, checked by their fingerprint', () => {
    const token = v1Token(binding.legacy, 1, 7);
    expect(decodeResumeToken(key, binding, token).state).toEqual({
      epoch: 1,
      low: 7,
      deliveredAbove: [],
      nextBatchIndex: 3,
    });
    expect(() =>
      decodeResumeToken(
        key,
        { ...binding, rank: 2, legacy: requestFingerprint({ ...fields, rank: 2, worldSize: 4 }) },
        token,
      ),
    ).toThrow(/belongs to another request: a resumed request must repeat rank, world_size/);
  });

  it('has a size bounded by the spread above low, not by the dataset', () => {
    const small = encodeResumeToken(key, binding, {
      epoch: 0,
      low: 10,
      deliveredAbove: [11],
      nextBatchIndex: 1,
    });
    const far = encodeResumeToken(key, binding, {
      epoch: 0,
      low: 4_000_000_000,
      deliveredAbove: [4_000_000_001],
      nextBatchIndex: 1,
    });
    expect(far.length).toBe(small.length);
    const wide = encodeResumeToken(key, binding, {
      epoch: 0,
      low: 0,
      deliveredAbove: [8191],
      nextBatchIndex: 0,
    });
    expect(wide.length).toBe(small.length - 1 + 1024);
  });

  it('rejects a tampered token, another key, another job, or another rank', () => {
    const token = encodeResumeToken(key, binding, {
      epoch: 0,
      low: 5,
      deliveredAbove: [7],
      nextBatchIndex: 1,
    });
    const tampered = Buffer.from(token);
    tampered[20]! ^= 1;
    expect(() => decodeResumeToken(key, binding, tampered)).toThrow(/not authentic/);
    expect(() => decodeResumeToken(randomBytes(32), binding, token)).toThrow(/not authentic/);
    expect(() => decodeResumeToken(key, binding, token.subarray(0, 10))).toThrow(/truncated/);
    for (const change of [{ seed: 43n }, { splitContentHash: 'abd' }, { batchSize: 64 }]) {
      const other = { ...binding, job: jobFingerprint({ ...fields, ...change }) };
      expect(() => decodeResumeToken(key, other, token)).toThrow(/belongs to another request/);
    }
    expect(() => decodeResumeToken(key, { ...binding, rank: 2 }, token)).toThrow(
      /issued to rank 1 of world size 4, not rank 2 of world size 4; .*job checkpoint/,
    );
    expect(() => decodeResumeToken(key, { ...binding, worldSize: 8 }, token)).toThrow(
      /not rank 1 of world size 8/,
    );
  });
});

describe('resume key rotation', () => {
  const state = { epoch: 1, low: 3, deliveredAbove: [5], nextBatchIndex: 1 };
  const oldKey = key;
  const newKey = randomBytes(32);

  it('accepts a token signed with a previous key after rotation', () => {
    const issued = encodeResumeToken(oldKey, binding, state);
    // Mid-rotation (old key first) and after it (new key first): both accept it.
    expect(decodeResumeToken([oldKey, newKey], binding, issued).state).toEqual(state);
    expect(decodeResumeToken([newKey, oldKey], binding, issued).state).toEqual(state);
    expect(readResumeToken([newKey, randomBytes(32), oldKey], issued).state).toEqual(state);
  });

  it('signs new tokens with the first key only', () => {
    const issued = encodeResumeToken([newKey, oldKey], binding, state);
    expect(issued.equals(encodeResumeToken(newKey, binding, state))).toBe(true);
    expect(decodeResumeToken(newKey, binding, issued).state).toEqual(state);
    expect(() => decodeResumeToken(oldKey, binding, issued)).toThrow(/not authentic/);
  });

  it('refuses a token signed with a key not in the list', () => {
    const issued = encodeResumeToken(randomBytes(32), binding, state);
    expect(() => decodeResumeToken([newKey, oldKey], binding, issued)).toThrow(/not authentic/);
    // Once the old key is dropped, its tokens are refused too.
    const old = encodeResumeToken(oldKey, binding, state);
    expect(() => decodeResumeToken([newKey], binding, old)).toThrow(/not authentic/);
  });
});

describe('job fingerprints of single-source requests', () => {
  it('stay what they were before mixing, so tokens issued then keep working', () => {
    // Values computed by the code before sources existed (commit ad39066).
    const old = {
      dataset: 'mnist',
      split: 'main/train',
      splitContentHash: 'ab'.repeat(32),
      batchSize: 128,
      seed: 42n,
      firstEpoch: 0,
      epochs: 10,
      shardRule: 'uneven' as const,
      shuffle: 'uniform' as const,
      dropLast: false,
    };
    expect(jobFingerprint(old).toString('hex')).toBe('e4f9fa8113ced47333a4c994137482c9');
    expect(requestFingerprint({ ...old, rank: 1, worldSize: 4 }).toString('hex')).toBe(
      '9ea93407908db51e62b82266f267f508',
    );
  });
});
