import { describe, expect, it } from 'vitest';
import { toProtoRequest } from '../../src/client/toProtoRequest.js';
import type { StreamBatchesOptions } from '../../src/client/StreamBatchesOptions.js';

const base: StreamBatchesOptions = { dataset: 'mnist', split: 'main/train', batchSize: 32 };

describe('toProtoRequest', () => {
  it('leaves omitted fields to the server (zero values, _UNSPECIFIED enums)', () => {
    expect(toProtoRequest(base)).toEqual({
      dataset: 'mnist',
      split: 'main/train',
      batchSize: 32,
      seed: '0',
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
      jobCheckpoint: Buffer.alloc(0),
    });
  });

  it('passes a job checkpoint through as bytes', () => {
    const checkpoint = Uint8Array.from([1, 2, 3]);
    expect(toProtoRequest({ ...base, jobCheckpoint: checkpoint }).jobCheckpoint).toEqual(
      Buffer.from([1, 2, 3]),
    );
  });

  it('maps every enum name to its proto value', () => {
    const cases = [
      [{ shardRule: 'uneven' }, { shardRule: 'SHARD_RULE_UNEVEN' }],
      [{ shardRule: 'pad' }, { shardRule: 'SHARD_RULE_PAD' }],
      [{ shardRule: 'drop' }, { shardRule: 'SHARD_RULE_DROP' }],
      [{ shuffle: 'uniform' }, { shuffle: 'SHUFFLE_MODE_UNIFORM' }],
      [{ shuffle: 'none' }, { shuffle: 'SHUFFLE_MODE_NONE' }],
      [{ ordering: 'out-of-order' }, { ordering: 'ORDERING_OUT_OF_ORDER' }],
      [{ ordering: 'in-order' }, { ordering: 'ORDERING_IN_ORDER' }],
      [{ missingSamplePolicy: 'fail' }, { missingSamplePolicy: 'MISSING_SAMPLE_POLICY_FAIL' }],
      [{ missingSamplePolicy: 'skip' }, { missingSamplePolicy: 'MISSING_SAMPLE_POLICY_SKIP' }],
    ] as const;
    for (const [input, output] of cases) {
      expect(toProtoRequest({ ...base, ...input })).toMatchObject(output);
    }
  });

  it('passes the numbers and flags through', () => {
    const request = toProtoRequest({
      ...base,
      firstEpoch: 2,
      epochs: 3,
      rank: 1,
      worldSize: 4,
      dropLast: true,
      prefetch: 8,
    });
    expect(request).toMatchObject({
      firstEpoch: 2,
      epochs: 3,
      rank: 1,
      worldSize: 4,
      dropLast: true,
      prefetch: 8,
    });
  });

  it('sends the seed as a decimal string, exact over the whole uint64 range', () => {
    expect(toProtoRequest({ ...base, seed: 42 }).seed).toBe('42');
    expect(toProtoRequest({ ...base, seed: 2n ** 64n - 1n }).seed).toBe('18446744073709551615');
    expect(toProtoRequest({ ...base, seed: '9007199254740993' }).seed).toBe('9007199254740993');
    expect(toProtoRequest({ ...base, seed: '007' }).seed).toBe('7');
  });

  it.each([
    [{ seed: -1 }, /seed/],
    [{ seed: 2 ** 53 }, /safe integer/],
    [{ seed: 1.5 }, /seed/],
    [{ seed: 2n ** 64n }, /seed must be in/],
    [{ seed: '-3' }, /decimal integer/],
    [{ seed: '0x10' }, /decimal integer/],
    [{ rank: -1 }, /rank must be an integer/],
    [{ batchSize: 1.5 }, /batchSize/],
    [{ epochs: 2 ** 32 }, /epochs/],
    [{ shardRule: 'even' }, /shardRule must be one of uneven, pad, drop, got even/],
    [{ ordering: 'toString' }, /ordering must be one of/],
  ])('rejects %o with a RangeError', (input, message) => {
    expect(() => toProtoRequest({ ...base, ...(input as Partial<StreamBatchesOptions>) })).toThrow(
      message,
    );
    expect(() => toProtoRequest({ ...base, ...(input as Partial<StreamBatchesOptions>) })).toThrow(
      RangeError,
    );
  });

  it('wraps the resume token without copying it', () => {
    const memory = new Uint8Array([9, 1, 2, 3, 9]);
    const token = memory.subarray(1, 4);
    const request = toProtoRequest({ ...base, resumeToken: token });
    const sent = request.resumeToken as Buffer;
    expect([...sent]).toEqual([1, 2, 3]);
    expect(sent.buffer).toBe(memory.buffer);
  });

  it("sends a mixture's sources with their defaults, checked with the server's words", () => {
    const base = { batchSize: 8 } as const;
    expect(
      toProtoRequest({
        ...base,
        sources: [
          { dataset: 'a', split: 'all' },
          { dataset: 'b', split: 'main/train', weight: 2.5, repeat: true },
        ],
        samplesPerEpoch: 1000,
      }),
    ).toMatchObject({
      sources: [
        { dataset: 'a', split: 'all', weight: 1, repeat: false },
        { dataset: 'b', split: 'main/train', weight: 2.5, repeat: true },
      ],
      samplesPerEpoch: '1000',
    });
    expect(toProtoRequest({ ...base, dataset: 'a', split: 'all' })).not.toHaveProperty('sources');
    expect(() =>
      toProtoRequest({
        ...base,
        dataset: 'a',
        split: 'all',
        sources: [{ dataset: 'a', split: 'all' }],
      }),
    ).toThrow(/either sources \(a mixture\) or dataset and split, not both/);
    expect(() => toProtoRequest({ ...base, split: 'all' })).toThrow(
      /names dataset and split, or sources/,
    );
    expect(() =>
      toProtoRequest({ ...base, dataset: 'a', split: 'all', samplesPerEpoch: 5 }),
    ).toThrow(/samplesPerEpoch applies to a mixture/);
    expect(() =>
      toProtoRequest({ ...base, sources: [{ dataset: 'a', split: 'all', weight: Number.NaN }] }),
    ).toThrow(RangeError);
    expect(() =>
      toProtoRequest({ ...base, sources: [{ dataset: 'a', split: 'all' }], samplesPerEpoch: -1 }),
    ).toThrow(/samples_per_epoch -1 is out of range/);
  });
});
