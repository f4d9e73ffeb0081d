import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ResolvedCheckpoint } from '../../src/core/resume/jobCheckpoint.js';
import {
  type ResumeState,
  type TokenBinding,
  encodeResumeToken,
  NO_BASE,
} from '../../src/core/resume/resumeToken.js';
import {
  checkCheckpointEpoch,
  resolveStart,
  startingPoint,
} from '../../src/core/resume/resolveStart.js';

const key = randomBytes(32);
// A binding is opaque to the resume rules: the fingerprints only have to match or not.
const binding: TokenBinding = {
  job: randomBytes(16),
  legacy: randomBytes(16),
  rank: 1,
  worldSize: 3,
};
const digest = randomBytes(16);
/** A checkpoint of epoch 1 whose old world delivered part of it. */
const resharded: ResolvedCheckpoint = {
  epoch: 1,
  layers: [
    {
      worldSize: 2,
      progress: [
        { low: 3, deliveredAbove: [] },
        { low: 0, deliveredAbove: [1] },
      ],
    },
  ],
  digest,
};
/** A checkpoint of epoch 1 taken before anything of it was delivered. */
const untouched: ResolvedCheckpoint = { epoch: 1, layers: [], digest: NO_BASE };

function state(epoch: number): ResumeState {
  return { epoch, low: 5, deliveredAbove: [7, 9], nextBatchIndex: 2 };
}

function tokenAt(epoch: number, base: Buffer = NO_BASE, to = binding): Buffer {
  return encodeResumeToken(key, { ...to, base }, state(epoch));
}

/**
 * Checks that `f` throws INVALID_ARGUMENT with `message` (a pattern: its start); returns the
 * error. Fails the test when `f` throws nothing.
 */
function refused(f: () => unknown, message: string | RegExp): unknown {
  let error: unknown;
  try {
    f();
  } catch (err) {
    error = err;
  }
  expect(error).toMatchObject({
    code: 'INVALID_ARGUMENT',
    message: typeof message === 'string' ? message : (expect.stringMatching(message) as unknown),
  });
  return error;
}

describe('startingPoint', () => {
  it('starts at first_epoch without a token or a checkpoint', () => {
    expect(startingPoint(key, binding, Buffer.alloc(0), undefined)).toBeUndefined();
  });

  it("starts at the beginning of a checkpoint's epoch without a token", () => {
    const start = { epoch: 1, low: 0, deliveredAbove: [], nextBatchIndex: 0 };
    expect(startingPoint(key, binding, Buffer.alloc(0), resharded)).toEqual(start);
    expect(startingPoint(key, binding, Buffer.alloc(0), untouched)).toEqual(start);
  });

  it("continues from a token's position", () => {
    expect(startingPoint(key, binding, tokenAt(2), undefined)).toEqual(state(2));
  });

  it('refuses a token of another job with the words that say what to repeat', () => {
    const token = tokenAt(1, NO_BASE, { ...binding, job: randomBytes(16) });
    refused(
      () => startingPoint(key, binding, token, undefined),
      'resume token belongs to another request: a resumed request must repeat dataset and ' +
        'split (or sources, with their weights and repeat, and samples_per_epoch), ' +
        'batch_size, seed, first_epoch, epochs, shard_rule, shuffle, drop_last and transform ' +
        "of the original one (and the splits' contents must not have changed)",
    );
  });

  it('refuses a token of another rank or world size, pointing to job checkpoints', () => {
    const token = tokenAt(1, NO_BASE, { ...binding, rank: 0, worldSize: 2 });
    refused(
      () => startingPoint(key, binding, token, undefined),
      /^resume token was issued to rank 0 of world size 2, not rank 1 of world size 3; .*job_checkpoint$/,
    );
  });

  it('refuses a token under another resume key', () => {
    const forged = encodeResumeToken(randomBytes(32), binding, state(1));
    refused(() => startingPoint(key, binding, forged, undefined), /^resume token is not authentic/);
  });

  it("refuses a token from before the checkpoint's epoch", () => {
    refused(
      () => startingPoint(key, binding, tokenAt(0), resharded),
      "resume token is in epoch 0, before the job checkpoint's epoch 1: pass the token of " +
        'a stream started from this job_checkpoint, or no token',
    );
  });

  it('takes a token of the re-sharded epoch only together with the checkpoint it came from', () => {
    const token = tokenAt(1, digest);
    expect(startingPoint(key, binding, token, resharded)).toEqual(state(1));
    const message =
      'resume token continues an epoch re-sharded from a job checkpoint: repeat the ' +
      'job_checkpoint that stream was started with, unchanged, along with the token';
    refused(() => startingPoint(key, binding, token, undefined), message);
    const other = { ...resharded, digest: randomBytes(16) };
    refused(() => startingPoint(key, binding, token, other), message);
  });

  it('refuses an ordinary token for an epoch the checkpoint re-shards', () => {
    refused(
      () => startingPoint(key, binding, tokenAt(1), resharded),
      'resume token is of an ordinary epoch but the request carries a job checkpoint for it; ' +
        'drop job_checkpoint, or pass the token of a stream started from it',
    );
  });

  it('takes ordinary tokens where the checkpoint re-shards nothing: its untouched epoch, later epochs', () => {
    expect(startingPoint(key, binding, tokenAt(1), untouched)).toEqual(state(1));
    expect(startingPoint(key, binding, tokenAt(2), resharded)).toEqual(state(2));
    refused(
      () => startingPoint(key, binding, tokenAt(2, digest), resharded),
      /^resume token continues an epoch re-sharded/,
    );
  });
});

describe('checkCheckpointEpoch', () => {
  it("takes a checkpoint's epoch from first_epoch to the end of the request's epochs", () => {
    for (const epoch of [2, 3, 4, 5]) {
      expect(() => checkCheckpointEpoch({ epoch }, 2, 3)).not.toThrow();
    }
  });

  it('refuses a checkpoint before first_epoch or past the end, naming the epochs', () => {
    for (const epoch of [1, 6]) {
      refused(
        () => checkCheckpointEpoch({ epoch }, 2, 3),
        `job checkpoint is in epoch ${epoch}, outside the request's epochs 2 to 4`,
      );
    }
  });
});

describe('resolveStart', () => {
  const request = {
    dataset: 'ds',
    split: 'train',
    batchSize: 2,
    seed: 7n,
    firstEpoch: 0,
    epochs: 3,
    shardRule: 'uneven' as const,
    shuffle: 'uniform',
    dropLast: false,
    rank: 0,
    worldSize: 2,
    resumeToken: Buffer.alloc(0),
  };
  const split = { positions: 20, contentHash: 'abc' };
  const at = (epoch: number, low: number): ResumeState => ({
    epoch,
    low,
    deliveredAbove: [],
    nextBatchIndex: low / 2,
  });

  it('starts at first_epoch and continues from the tokens it signs', () => {
    const start = resolveStart(key, request, split);
    expect(start.resume).toBeUndefined();
    expect(start.checkpoint).toBeUndefined();
    expect(start.resharded(0)).toBe(false);
    const again = resolveStart(
      key,
      { ...request, resumeToken: start.resumeToken(at(1, 4)) },
      split,
    );
    expect(again.resume).toEqual(at(1, 4));
    expect(again.job).toEqual(start.job);
  });

  it("binds tokens to the job's split, rank and world", () => {
    const token = resolveStart(key, request, split).resumeToken(at(1, 4));
    refused(
      () => resolveStart(key, { ...request, resumeToken: token }, { ...split, contentHash: 'x' }),
      /^resume token belongs to another request/,
    );
    refused(
      () => resolveStart(key, { ...request, rank: 1, resumeToken: token }, split),
      /^resume token was issued to rank 0 of world size 2, not rank 1/,
    );
  });

  it('names the resume key as the caller does', () => {
    const forged = resolveStart(randomBytes(32), request, split).resumeToken(at(0, 2));
    const withToken = { ...request, resumeToken: forged };
    refused(() => resolveStart(key, withToken, split), /every replica must share resumeKey,/);
    refused(
      () => resolveStart(key, withToken, split, { resumeKey: 'SCYLLA_LOADER_RESUME_KEY' }),
      /every replica must share SCYLLA_LOADER_RESUME_KEY,/,
    );
  });

  it("continues a job checkpoint's epoch at another world size, its tokens carrying the checkpoint", () => {
    // Rank 0 of world 2 delivered 4 positions of epoch 1; rank 1 none.
    const old = resolveStart(key, request, split);
    const jobCheckpoint = {
      worldSize: 2,
      ranks: [
        { rank: 0, epoch: 1, resumeToken: old.resumeToken(at(1, 4)) },
        { rank: 1, epoch: 1, resumeToken: Buffer.alloc(0) },
      ],
    };
    const wider = { ...request, worldSize: 3, jobCheckpoint };
    const start = resolveStart(key, wider, split);
    expect(start.checkpoint?.epoch).toBe(1);
    expect(start.resume).toEqual(at(1, 0));
    expect([0, 1, 2].map((e) => start.resharded(e))).toEqual([false, true, false]);
    const token = start.resumeToken(at(1, 2));
    expect(resolveStart(key, { ...wider, resumeToken: token }, split).resume).toEqual(at(1, 2));
    refused(
      () => resolveStart(key, { ...request, worldSize: 3, resumeToken: token }, split),
      /^resume token continues an epoch re-sharded from a job checkpoint/,
    );
    const past = {
      worldSize: 2,
      ranks: [
        { rank: 0, epoch: 4, resumeToken: old.resumeToken(at(4, 4)) },
        { rank: 1, epoch: 4, resumeToken: Buffer.alloc(0) },
      ],
    };
    refused(
      () => resolveStart(key, { ...wider, jobCheckpoint: past }, split),
      "job checkpoint is in epoch 4, outside the request's epochs 0 to 2",
    );
  });
});
