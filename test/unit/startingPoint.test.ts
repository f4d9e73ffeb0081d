import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ResolvedCheckpoint } from '../../src/core/resume/jobCheckpoint.js';
import {
  type ResumeState,
  type TokenBinding,
  encodeResumeToken,
  NO_BASE,
} from '../../src/core/resume/resumeToken.js';
import { checkCheckpointEpoch } from '../../src/core/stream/checkCheckpointEpoch.js';
import { startingPoint } from '../../src/core/stream/startingPoint.js';

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
