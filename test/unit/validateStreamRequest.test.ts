import { encodeJobCheckpoint } from '../../src/proto/jobCheckpointCodec.js';
import { describe, expect, it } from 'vitest';
import type { StreamBatchesRequest__Output } from '../../src/generated/scylla_loader/v1/StreamBatchesRequest.js';
import { validateStreamRequest } from '../../src/server/rpc/validateStreamRequest.js';

const limits = {
  maxBatchSize: 8192,
  defaultPrefetch: 4,
  maxPrefetch: 64,
  maxWindowSamples: 65_536,
  maxTransformSide: 4096,
  maxMessageBytes: 256 * 1024 * 1024,
};
const base: StreamBatchesRequest__Output = {
  dataset: 'mnist',
  split: 'all',
  batchSize: 128,
  seed: '18446744073709551615',
  firstEpoch: 0,
  epochs: 0,
  rank: 0,
  worldSize: 0,
  shardRule: 'SHARD_RULE_UNSPECIFIED',
  shuffle: 'SHUFFLE_MODE_UNSPECIFIED',
  dropLast: false,
  ordering: 'ORDERING_UNSPECIFIED',
  prefetch: 0,
  missingSamplePolicy: 'MISSING_SAMPLE_POLICY_UNSPECIFIED',
  resumeToken: Buffer.alloc(0),
  transform: null,
  jobCheckpoint: Buffer.alloc(0),
  sources: [],
  samplesPerEpoch: '0',
  columns: [],
  jobId: '',
  skipBatches: null,
  replay: null,
};

describe('validateStreamRequest', () => {
  it('applies the documented defaults and keeps a full 64-bit seed', () => {
    expect(validateStreamRequest(base, limits)).toMatchObject({
      epochs: 1,
      worldSize: 1,
      prefetch: 4,
      shardRule: 'uneven',
      shuffle: 'uniform',
      ordering: 'out-of-order',
      missing: 'fail',
      seed: 2n ** 64n - 1n,
    });
    expect(
      validateStreamRequest(
        {
          ...base,
          shardRule: 'SHARD_RULE_PAD',
          shuffle: 'SHUFFLE_MODE_NONE',
          ordering: 'ORDERING_IN_ORDER',
          missingSamplePolicy: 'MISSING_SAMPLE_POLICY_SKIP',
        },
        limits,
      ),
    ).toMatchObject({ shardRule: 'pad', shuffle: 'none', ordering: 'in-order', missing: 'skip' });
  });

  it('holds the window to the configured limit, not a constant', () => {
    const small = { ...limits, maxWindowSamples: 1000 };
    expect(() => validateStreamRequest({ ...base, prefetch: 8, batchSize: 128 }, small)).toThrow(
      /prefetch x batch_size = 1024 samples is over the limit of 1000 per stream/,
    );
    expect(validateStreamRequest({ ...base, prefetch: 7, batchSize: 128 }, small).prefetch).toBe(7);
  });

  it.each([
    [{ batchSize: 0 }, /batch_size 0 is out of range: use 1 to 8192/],
    [{ batchSize: 8193 }, /batch_size 8193 is out of range/],
    [{ rank: 2, worldSize: 2 }, /rank 2 must be below world_size 2/],
    [{ rank: 1 }, /rank 1 must be below world_size 1/],
    [{ prefetch: 65 }, /prefetch 65 is over the server limit of 64/],
    [{ prefetch: 64, batchSize: 8192 }, /prefetch x batch_size = 524288 samples is over the limit/],
    [{ dataset: 'No-Such' }, /invalid dataset name/],
    [{ dataset: '' }, /invalid dataset name/],
    [{ split: ' ' }, /split is required/],
    [{ firstEpoch: 2 ** 32 - 1, epochs: 1 }, /must stay below 2\^32/],
    [{ ordering: 'ORDERING_SIDEWAYS' as never }, /unknown ordering ORDERING_SIDEWAYS/],
    [{ shuffle: '7' as never }, /unknown shuffle 7/],
    [{ missingSamplePolicy: '9' as never }, /unknown missing_sample_policy 9/],
  ])('rejects %j with a message naming the field', (change, message) => {
    expect(() => validateStreamRequest({ ...base, ...change }, limits)).toThrow(message);
  });
});

describe('validateStreamRequest job_checkpoint', () => {
  it('parses a serialized JobCheckpoint and refuses bytes that are not one', () => {
    const cp = encodeJobCheckpoint({
      worldSize: 2,
      ranks: [
        { rank: 0, epoch: 3, resumeToken: Buffer.from([1, 2]) },
        { rank: 1, epoch: 3, resumeToken: Buffer.alloc(0) },
      ],
    });
    expect(validateStreamRequest({ ...base, jobCheckpoint: cp }, limits).jobCheckpoint).toEqual({
      worldSize: 2,
      ranks: [
        { rank: 0, epoch: 3, resumeToken: Buffer.from([1, 2]) },
        { rank: 1, epoch: 3, resumeToken: Buffer.alloc(0) },
      ],
    });
    expect(validateStreamRequest(base, limits).jobCheckpoint).toBeUndefined();
    expect(() =>
      validateStreamRequest({ ...base, jobCheckpoint: Buffer.from([0xff, 0xff, 0xff]) }, limits),
    ).toThrow(/job_checkpoint is not a serialized JobCheckpoint.*unchanged/);
  });
});

describe('validateStreamRequest sources', () => {
  const sources = [
    { dataset: 'a', split: 'all', weight: 3, repeat: false },
    { dataset: 'b', split: 'set/train', weight: 1, repeat: true },
  ];
  const mixed = { ...base, dataset: '', split: '', sources, samplesPerEpoch: '500' };

  it('reads a mixture and leaves dataset and split empty', () => {
    expect(validateStreamRequest(mixed, limits)).toMatchObject({
      dataset: '',
      split: '',
      mix: { sources, samplesPerEpoch: 500 },
    });
    expect(validateStreamRequest(base, limits).mix).toBeUndefined();
  });

  it('refuses sources beside a dataset, sizing without sources, and a bad source by index', () => {
    expect(() => validateStreamRequest({ ...mixed, dataset: 'mnist' }, limits)).toThrow(
      /either sources \(a mixture\) or dataset and split, not both/,
    );
    expect(() => validateStreamRequest({ ...base, samplesPerEpoch: '10' }, limits)).toThrow(
      /samples_per_epoch applies to a mixture/,
    );
    expect(() =>
      validateStreamRequest(
        { ...mixed, sources: [sources[0]!, { ...sources[1]!, weight: 0 }] },
        limits,
      ),
    ).toThrow(/source 1 \(dataset "b", split "set\/train"\): weight 0 must be/);
    expect(() =>
      validateStreamRequest(
        { ...mixed, sources: Array.from({ length: 65 }, () => sources[0]!) },
        limits,
      ),
    ).toThrow(/at most 64 sources, not 65/);
    expect(() =>
      validateStreamRequest({ ...mixed, samplesPerEpoch: '18446744073709551615' }, limits),
    ).toThrow(/samples_per_epoch 18446744073709551615 is out of range/);
  });
});
