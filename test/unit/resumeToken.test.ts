import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decodeResumeToken,
  encodeResumeToken,
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
  rank: 1,
  worldSize: 4,
  shardRule: 'uneven',
  shuffle: 'uniform',
  dropLast: false,
};
const key = randomBytes(32);
const fp = requestFingerprint(fields);

describe('resume token', () => {
  it('round-trips the state', () => {
    const state = {
      epoch: 1,
      low: 1000,
      deliveredAbove: [1001, 1007, 1008, 2000],
      nextBatchIndex: 9,
    };
    expect(decodeResumeToken(key, fp, encodeResumeToken(key, fp, state))).toEqual(state);
    const empty = { epoch: 0, low: 0, deliveredAbove: [], nextBatchIndex: 0 };
    expect(decodeResumeToken(key, fp, encodeResumeToken(key, fp, empty))).toEqual(empty);
  });

  it('has a size bounded by the spread above low, not by the dataset', () => {
    const small = encodeResumeToken(key, fp, {
      epoch: 0,
      low: 10,
      deliveredAbove: [11],
      nextBatchIndex: 1,
    });
    const far = encodeResumeToken(key, fp, {
      epoch: 0,
      low: 4_000_000_000,
      deliveredAbove: [4_000_000_001],
      nextBatchIndex: 1,
    });
    expect(far.length).toBe(small.length);
    const wide = encodeResumeToken(key, fp, {
      epoch: 0,
      low: 0,
      deliveredAbove: [8191],
      nextBatchIndex: 0,
    });
    expect(wide.length).toBe(small.length - 1 + 1024);
  });

  it('rejects a tampered token, another key, or another request', () => {
    const token = encodeResumeToken(key, fp, {
      epoch: 0,
      low: 5,
      deliveredAbove: [7],
      nextBatchIndex: 1,
    });
    const tampered = Buffer.from(token);
    tampered[20]! ^= 1;
    expect(() => decodeResumeToken(key, fp, tampered)).toThrow(/not authentic/);
    expect(() => decodeResumeToken(randomBytes(32), fp, token)).toThrow(/not authentic/);
    expect(() => decodeResumeToken(key, fp, token.subarray(0, 10))).toThrow(/truncated/);
    for (const change of [
      { rank: 2 },
      { seed: 43n },
      { splitContentHash: 'abd' },
      { batchSize: 64 },
    ]) {
      expect(() =>
        decodeResumeToken(key, requestFingerprint({ ...fields, ...change }), token),
      ).toThrow(/belongs to another request/);
    }
  });
});
