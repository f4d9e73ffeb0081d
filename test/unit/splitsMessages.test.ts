import { status as grpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { toCreateSplitsRequest } from '../../src/client/toCreateSplitsRequest.js';
import { toSplitSet } from '../../src/client/toSplitSet.js';
import type { CreateSplitsRequest__Output } from '../../src/generated/scylla_loader/v1/CreateSplitsRequest.js';
import type { SplitSet__Output } from '../../src/generated/scylla_loader/v1/SplitSet.js';
import { loadLoaderProto } from '../../src/proto/loadLoaderProto.js';
import type { CreateSplitsOptions } from '../../src/client/CreateSplitsOptions.js';
import { toGrpcStatus } from '../../src/server/errors/toGrpcStatus.js';
import { streamableSplits } from '../../src/server/rpc/streamableSplits.js';
import { toCreateSplitSetRequest } from '../../src/server/rpc/toCreateSplitSetRequest.js';
import { toSplitSetMessage } from '../../src/server/rpc/toSplitSetMessage.js';
import type { SplitSetInfo } from '../../src/core/splits/SplitSetInfo.js';

/** What `fn` throws; fails the test when it returns. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

const service = loadLoaderProto().scylla_loader.v1.LoaderService.service;

/** What the server's handler receives for a request the SDK sends: through the real wire format. */
function overTheWire(request: object): CreateSplitsRequest__Output {
  const bytes = service.CreateSplits.requestSerialize(request);
  return service.CreateSplits.requestDeserialize(bytes) as CreateSplitsRequest__Output;
}

function splitSetOverTheWire(info: SplitSetInfo): SplitSet__Output {
  const bytes = service.GetSplit.responseSerialize({ splitSet: toSplitSetMessage(info) });
  return (service.GetSplit.responseDeserialize(bytes) as { splitSet: SplitSet__Output }).splitSet;
}

const info: SplitSetInfo = {
  name: 'cv',
  version: 3,
  params: { folds: 2, groupBy: ['patient_id'], seed: '18446744073709551615' },
  seed: 18446744073709551615n,
  folds: 2,
  parts: [
    {
      name: 'fold-0',
      size: 10,
      classCounts: { '-1': 1, 0: 6, 1: 3 },
      targets: { 0: 6, 1: 3 },
      groups: 2,
      chunks: 1,
    },
    {
      name: 'fold-1',
      size: 9,
      classCounts: { 0: 6, 1: 3 },
      targets: { 0: 6, 1: 3 },
      groups: 3,
      chunks: 1,
    },
  ],
  contentHash: 'ab'.repeat(32),
  writeId: '00000000-0000-0000-0000-000000000000',
  worstDeviation: 0.125,
  createdAt: new Date('2025-06-07T08:09:10.123Z'),
};

describe('CreateSplits request: SDK → wire → createSplitSet', () => {
  it('carries every field, with natural targets and no limit by default', () => {
    const req = toCreateSplitSetRequest(
      overTheWire(
        toCreateSplitsRequest({ dataset: 'ds', name: 'main', parts: { train: 7, val: 3 } }),
      ),
    );
    expect(req).toEqual({
      dataset: 'ds',
      name: 'main',
      parts: [
        ['train', 7],
        ['val', 3],
      ],
      folds: 0,
      groupBy: [],
      classTargets: { mode: 'natural' },
      filters: [],
      seed: 0n,
      newVersion: false,
      allowShortfall: false,
    });
  });

  it('carries folds, grouping, ratios, a limit, the three filters and a 64-bit seed', () => {
    const req = toCreateSplitSetRequest(
      overTheWire(
        toCreateSplitsRequest({
          dataset: 'ds',
          name: 'cv',
          folds: 5,
          groupBy: ['patient_id', 'slide'],
          classTargets: { ratios: { 0: 1, 1: 2 } },
          maxTotal: 1000,
          filters: [
            { column: 'site', equals: 'a' },
            { column: 'slide', in: [1, 2] },
            { column: 'x', max: 5 },
            { column: 'y', min: -1, max: 1 },
          ],
          seed: 2n ** 64n - 1n,
          newVersion: true,
          allowShortfall: true,
        }),
      ),
    );
    expect(req).toEqual({
      dataset: 'ds',
      name: 'cv',
      parts: [],
      folds: 5,
      groupBy: ['patient_id', 'slide'],
      classTargets: { mode: 'ratios', ratios: { 0: 1, 1: 2 } },
      maxTotal: 1000,
      filters: [
        { column: 'site', equals: 'a' },
        { column: 'slide', in: ['1', '2'] },
        { column: 'x', max: 5 },
        { column: 'y', min: -1, max: 1 },
      ],
      seed: 2n ** 64n - 1n,
      newVersion: true,
      allowShortfall: true,
    });
    const balanced = overTheWire(
      toCreateSplitsRequest({
        dataset: 'ds',
        name: 'b',
        parts: { a: 1 },
        classTargets: 'balanced',
      }),
    );
    expect(toCreateSplitSetRequest(balanced).classTargets).toEqual({ mode: 'balanced' });
  });

  it('the SDK refuses, with a RangeError, only what the proto cannot carry', () => {
    const base = { dataset: 'ds', name: 'x', parts: { a: 1 } };
    expect(() => toCreateSplitsRequest({ ...base, maxTotal: -1 })).toThrow(RangeError);
    expect(() => toCreateSplitsRequest({ ...base, folds: 1.5 })).toThrow(RangeError);
    expect(() => toCreateSplitsRequest({ ...base, seed: -1 })).toThrow(RangeError);
    const notNumber = { a: 'seven' } as unknown as Record<string, number>;
    expect(() => toCreateSplitsRequest({ ...base, parts: notNumber })).toThrow(RangeError);
    const badLabel = { ratios: { cat: 1 } } as unknown as { ratios: Record<number, number> };
    expect(() => toCreateSplitsRequest({ ...base, classTargets: badLabel })).toThrow(RangeError);
  });

  it('what makes no sense reaches the server, whose one validator names the field', () => {
    const base = { dataset: 'ds', name: 'x', parts: { a: 1 } };
    const cases: Array<[CreateSplitsOptions, RegExp]> = [
      [{ ...base, parts: { a: 0 } }, /parts\.0\.1: part a needs a positive weight, got 0/],
      [{ ...base, parts: { a: NaN } }, /parts\.0\.1: a part weight must be a finite number/],
      [
        { ...base, classTargets: { ratios: { 0: -1 } } },
        /classTargets\.ratios\.0: class ratio of label 0 must be positive/,
      ],
      [{ ...base, filters: [{ column: 'x' }] }, /filters\.0: filter on x needs exactly one/],
      [{ ...base, filters: [{ column: 'x', min: 2, max: 1 }] }, /filters\.0\.min: range min 2/],
      [{ ...base, parts: undefined, folds: 1 }, /folds: k-fold needs at least 2 folds/],
    ];
    for (const [options, details] of cases) {
      const wire = overTheWire(toCreateSplitsRequest(options));
      const status = toGrpcStatus(thrown(() => toCreateSplitSetRequest(wire)));
      expect(status.code, JSON.stringify(options)).toBe(grpcStatus.INVALID_ARGUMENT);
      expect(status.details).toMatch(details);
    }
  });

  it('the server refuses what the wire allows but cannot mean anything, naming the field', () => {
    const base = { dataset: 'ds', name: 'x', parts: [{ name: 'a', weight: 1 }] };
    const bad: Array<[object, RegExp]> = [
      [{ ...base, parts: [{ name: 'a', weight: Infinity }] }, /parts\.0\.1: .*finite/],
      [{ ...base, filters: [{ column: 'c' }] }, /filters\.0: filter on c needs exactly one/],
      [{ ...base, filters: [{ column: 'c', in: { values: [] } }] }, /filters\.0\.in: .*at least/],
      [
        { ...base, filters: [{ column: 'c', range: { min: 2, max: 1 } }] },
        /filters\.0\.min: range min 2 is above max 1/,
      ],
      [{ ...base, filters: [{ column: 'c', range: { min: NaN } }] }, /filters\.0\.min: /],
      [{ ...base, classTargetMode: 'CLASS_TARGET_MODE_RATIOS' }, /classTargets\.ratios: .*label/],
      [
        { ...base, classTargetMode: 'CLASS_TARGET_MODE_RATIOS', classRatios: { 3: 0 } },
        /class ratio of label 3 must be positive/,
      ],
      [{ ...base, classRatios: { 0: 1 } }, /class_target_mode is not CLASS_TARGET_MODE_RATIOS/],
      [{ ...base, maxTotal: '18446744073709551615' }, /maxTotal: max total is at most/],
      [{ ...base, dataset: 'Bad-Name' }, /dataset: invalid dataset name "Bad-Name"/],
      [{ ...base, name: 'Main' }, /name: invalid split set name "Main"/],
      [
        { ...base, parts: [...base.parts, { name: 'a', weight: 2 }] },
        /parts\.1\.0: part a is named twice/,
      ],
      [{ ...base, parts: [{ name: 'val-0', weight: 1 }] }, /parts\.0\.0: .*reserved/],
      [{ ...base, folds: 3 }, /folds: give either parts or folds, not both/],
      [{ dataset: 'ds', name: 'x' }, /parts: give the parts/],
      [{ ...base, folds: 101 }, /folds: folds is at most 100/],
      [{ ...base, groupBy: ['p', 'p'] }, /groupBy\.1: group-by column p is named twice/],
      [{ ...base, groupBy: ['Patient'] }, /groupBy\.0: invalid metadata column name/],
      // Found by the fuzzer: an unknown mode used to split with natural proportions.
      [{ ...base, classTargetMode: 4 }, /unknown class_target_mode 4/],
      [{ ...base, classTargetMode: -1 }, /unknown class_target_mode -1/],
    ];
    for (const [b, details] of bad) {
      const status = toGrpcStatus(thrown(() => toCreateSplitSetRequest(overTheWire(b))));
      expect(status.code, JSON.stringify(b)).toBe(grpcStatus.INVALID_ARGUMENT);
      expect(status.details, JSON.stringify(b)).toMatch(details);
    }
  });
});

describe('SplitSet: stored info → wire → SDK', () => {
  it('keeps every figure, the 64-bit seed and the time to the millisecond', () => {
    const set = toSplitSet(splitSetOverTheWire(info));
    expect(set).toEqual({
      name: 'cv',
      version: 3,
      params: info.params,
      seed: 18446744073709551615n,
      folds: 2,
      parts: [
        {
          name: 'fold-0',
          size: 10,
          classCounts: { [-1]: 1, 0: 6, 1: 3 },
          targets: { 0: 6, 1: 3 },
          groups: 2,
        },
        {
          name: 'fold-1',
          size: 9,
          classCounts: { 0: 6, 1: 3 },
          targets: { 0: 6, 1: 3 },
          groups: 3,
        },
      ],
      contentHash: info.contentHash,
      worstDeviation: 0.125,
      createdAt: info.createdAt,
      streamableSplits: [
        'cv@3/fold-0',
        'cv@3/fold-1',
        'cv@3/train-0',
        'cv@3/val-0',
        'cv@3/train-1',
        'cv@3/val-1',
      ],
    });
  });
});

describe('streamableSplits', () => {
  it('lists all, then the parts of each set latest version, with train-i/val-i for folds', () => {
    const main = (version: number): SplitSetInfo => ({
      ...info,
      name: 'main',
      version,
      folds: 0,
      parts: [{ ...info.parts[0]!, name: version === 1 ? 'old' : 'train' }],
    });
    expect(streamableSplits([])).toEqual(['all']);
    expect(streamableSplits([main(1), info, main(2)])).toEqual([
      'all',
      'cv/fold-0',
      'cv/fold-1',
      'cv/train-0',
      'cv/val-0',
      'cv/train-1',
      'cv/val-1',
      'main/train',
    ]);
  });
});
