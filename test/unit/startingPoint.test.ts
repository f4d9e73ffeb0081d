import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ResolvedCheckpoint } from '../../src/core/resume/jobCheckpoint.js';
import {
  type ResumeState,
  type TokenBinding,
  encodeResumeToken,
  jobFingerprint,
  NO_BASE,
  requestFingerprint,
} from '../../src/core/resume/resumeToken.js';
import { checkCheckpointEpoch } from '../../src/core/stream/checkCheckpointEpoch.js';
import { startingPoint } from '../../src/core/stream/startingPoint.js';

const key = randomBytes(32);
const fields = {
  dataset: 'd',
  split: 'all',
  splitContentHash: 'h',
  batchSize: 4,
  seed: 7n,
  firstEpoch: 0,
  epochs: 3,
  shardRule: 'uneven',
  shuffle: 'uniform',
  dropLast: false,
};
const job = jobFingerprint(fields);
const owner = { rank: 1, worldSize: 3 };
const binding: TokenBinding = {
  job,
  legacy: requestFingerprint({ ...fields, ...owner }),
  ...owner,
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

/** The error `f` throws (failing the test when it throws none). */
function refusal(f: () => unknown): unknown {
  try {
    f();
  } catch (err) {
    return err;
  }
  throw new Error('expected a refusal');
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
    const other = jobFingerprint({ ...fields, seed: 8n });
    expect(
      refusal(() =>
        startingPoint(key, binding, tokenAt(1, NO_BASE, { ...binding, job: other }), undefined),
      ),
    ).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message:
        'resume token belongs to another request: a resumed request must repeat dataset, ' +
        'split, batch_size, seed, first_epoch, epochs, shard_rule, shuffle, drop_last and ' +
        "transform of the original one (and the split's contents must not have changed)",
    });
  });

  it('refuses a token of another rank or world size, pointing to job checkpoints', () => {
    const token = tokenAt(1, NO_BASE, { ...binding, rank: 0, worldSize: 2 });
    expect(refusal(() => startingPoint(key, binding, token, undefined))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(
        /^resume token was issued to rank 0 of world size 2, not rank 1 of world size 3; .*job_checkpoint$/,
      ) as unknown,
    });
  });

  it('refuses a token under another resume key', () => {
    const forged = encodeResumeToken(randomBytes(32), binding, state(1));
    expect(refusal(() => startingPoint(key, binding, forged, undefined))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/^resume token is not authentic/) as unknown,
    });
  });

  it("refuses a token from before the checkpoint's epoch", () => {
    expect(refusal(() => startingPoint(key, binding, tokenAt(0), resharded))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message:
        "resume token is in epoch 0, before the job checkpoint's epoch 1: pass the token of " +
        'a stream started from this job_checkpoint, or no token',
    });
  });

  it('takes a token of the re-sharded epoch only together with the checkpoint it came from', () => {
    expect(startingPoint(key, binding, tokenAt(1, digest), resharded)).toEqual(state(1));
    const withoutCheckpoint = refusal(() =>
      startingPoint(key, binding, tokenAt(1, digest), undefined),
    );
    expect(withoutCheckpoint).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message:
        'resume token continues an epoch re-sharded from a job checkpoint: repeat the ' +
        'job_checkpoint that stream was started with, unchanged, along with the token',
    });
    const otherCheckpoint = { ...resharded, digest: randomBytes(16) };
    expect(refusal(() => startingPoint(key, binding, tokenAt(1, digest), otherCheckpoint))).toEqual(
      withoutCheckpoint,
    );
  });

  it('refuses an ordinary token for an epoch the checkpoint re-shards', () => {
    expect(refusal(() => startingPoint(key, binding, tokenAt(1), resharded))).toMatchObject({
      code: 'INVALID_ARGUMENT',
      message:
        'resume token is of an ordinary epoch but the request carries a job checkpoint for it; ' +
        'drop job_checkpoint, or pass the token of a stream started from it',
    });
  });

  it('takes ordinary tokens where the checkpoint re-shards nothing: its untouched epoch, later epochs', () => {
    expect(startingPoint(key, binding, tokenAt(1), untouched)).toEqual(state(1));
    expect(startingPoint(key, binding, tokenAt(2), resharded)).toEqual(state(2));
    expect(refusal(() => startingPoint(key, binding, tokenAt(2, digest), resharded))).toMatchObject(
      {
        code: 'INVALID_ARGUMENT',
        message: expect.stringMatching(/^resume token continues an epoch re-sharded/) as unknown,
      },
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
      expect(refusal(() => checkCheckpointEpoch({ epoch }, 2, 3))).toMatchObject({
        code: 'INVALID_ARGUMENT',
        message: `job checkpoint is in epoch ${epoch}, outside the request's epochs 2 to 4`,
      });
    }
  });
});
