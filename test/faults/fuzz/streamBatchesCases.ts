import fc from 'fast-check';
import { describeRequest as describe, type FuzzCase, type FuzzTargets } from './FuzzCase.js';
import { loaderCodec } from './loaderCodec.js';
import { damagedJobCheckpoint, mutatedToken } from './damagedTokens.js';
import { nastyString, enumNumber, uint32Extreme, uint64Extreme } from './fuzzValues.js';
import { MAX_RECEIVE_MESSAGE_BYTES } from '../../../src/server/index.js';

const IDENTIFIER = /^[a-z][a-z0-9_]{0,47}$/;
const U32 = 2 ** 32 - 1;
const INVALID = ['INVALID_ARGUMENT'] as const;

type Req = Record<string, unknown>;

/**
 * Generated StreamBatches requests, each a valid request of `targets` with one kind of damage
 * (`stream:<kind>`, below with the statuses right for it): legal extremes (OK), out-of-range
 * fields, unknown enum numbers, bad names, damaged resume tokens and job checkpoints, unknown
 * datasets and splits, transforms of non-images, every field random, an oversized request.
 *
 * @internal
 */
export function streamBatchesCases(targets: FuzzTargets): fc.Arbitrary<FuzzCase> {
  const codec = loaderCodec();
  const make =
    (kind: string, expected: readonly string[]) =>
    ([req, note]: [Req, string]): FuzzCase => ({
      rpc: 'StreamBatches',
      kind: `stream:${kind}`,
      expected,
      body: codec.encode('StreamBatches', req),
      note,
    });
  const base = (over: Req): Req => ({
    dataset: targets.dataset,
    split: 'all',
    batchSize: 16,
    seed: '7',
    ...over,
  });
  const wrap = (x: number): number => x >>> 0;
  const rawKind = (
    weight: number,
    name: string,
    expected: readonly string[],
    input: () => fc.Arbitrary<[Req, string]>,
  ): fc.WeightedArbitrary<FuzzCase> => ({ weight, arbitrary: input().map(make(name, expected)) });
  const kind = (
    weight: number,
    name: string,
    expected: readonly string[],
    over: () => fc.Arbitrary<Req>,
  ): fc.WeightedArbitrary<FuzzCase> =>
    rawKind(weight, name, expected, () => over().map((o) => [base(o), describe(o)]));

  const split = fc.constantFrom(
    'all',
    `${targets.splitSet}/train`,
    `${targets.splitSet}/val`,
    `${targets.splitSet}@1/train`,
  );
  const validExtremes = fc
    .record({
      batchSize: fc.integer({ min: 1, max: 512 }),
      worldSize: fc.oneof(fc.constantFrom(0, 1, 2, 7, U32), fc.integer({ min: 0, max: U32 })),
      rankShare: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
      epochs: fc.constantFrom(0, 1, 2, 5),
      firstEpochAtEnd: fc.boolean(),
      firstEpoch: fc.integer({ min: 0, max: 1_000_000 }),
      seed: uint64Extreme(),
      // Only valid enum values here: the unknown ones are `stream:enum`.
      shardRule: fc.nat(3),
      shuffle: fc.nat(2),
      ordering: fc.nat(2),
      missingSamplePolicy: fc.nat(2),
      dropLast: fc.boolean(),
      prefetch: fc.integer({ min: 0, max: 64 }),
      split,
    })
    .map((r): Req => {
      const world = r.worldSize === 0 ? 1 : r.worldSize;
      const epochs = r.epochs === 0 ? 1 : r.epochs;
      return {
        batchSize: r.batchSize,
        worldSize: r.worldSize,
        rank: Math.floor(r.rankShare * world),
        epochs: r.epochs,
        firstEpoch: r.firstEpochAtEnd ? U32 - epochs : r.firstEpoch,
        seed: r.seed,
        shardRule: r.shardRule,
        shuffle: r.shuffle,
        ordering: r.ordering,
        missingSamplePolicy: r.missingSamplePolicy,
        dropLast: r.dropLast,
        prefetch: Math.min(r.prefetch, Math.floor(targets.maxWindowSamples / r.batchSize)),
        split: r.split,
      };
    });

  const enumField = fc.constantFrom(
    ['shardRule', 4],
    ['shuffle', 3],
    ['ordering', 3],
    ['missingSamplePolicy', 3],
  ) as fc.Arbitrary<[string, number]>;

  const transform = fc
    .record(
      {
        channels: uint32Extreme(),
        resize: uint32Extreme(),
        centerCrop: fc.record({ height: uint32Extreme(), width: uint32Extreme() }),
        randomResizedCrop: fc.record({
          height: uint32Extreme(),
          width: uint32Extreme(),
          scaleMin: fc.double(),
          scaleMax: fc.double(),
          ratioMin: fc.double(),
          ratioMax: fc.double(),
        }),
        horizontalFlip: fc.double(),
        interpolation: enumNumber(5),
        output: enumNumber(4),
        quality: uint32Extreme(),
        badImagePolicy: enumNumber(3),
      },
      { requiredKeys: [] },
    )
    .map((t): Req => {
      // A oneof takes one member: keep at most one crop.
      if (t.centerCrop && t.randomResizedCrop) delete t.randomResizedCrop;
      return t;
    });

  return fc.oneof(
    kind(4, 'valid-extremes', ['OK'], () => validExtremes),
    kind(2, 'batch-size', INVALID, () =>
      uint32Extreme()
        .filter((b) => wrap(b) === 0 || wrap(b) > targets.maxBatchSize)
        .map((batchSize) => ({ batchSize })),
    ),
    kind(2, 'rank', INVALID, () =>
      fc
        .tuple(uint32Extreme(), uint32Extreme())
        .filter(([rank, world]) => wrap(rank) >= Math.max(wrap(world), 1))
        .map(([rank, worldSize]) => ({ rank, worldSize })),
    ),
    kind(2, 'epochs', INVALID, () =>
      fc
        .tuple(uint32Extreme(), uint32Extreme())
        .filter(([first, epochs]) => wrap(first) + Math.max(wrap(epochs), 1) > U32)
        .map(([firstEpoch, epochs]) => ({ firstEpoch, epochs })),
    ),
    kind(2, 'prefetch', INVALID, () =>
      fc
        .tuple(uint32Extreme(), fc.integer({ min: 1, max: targets.maxBatchSize }))
        .filter(([p, b]) => wrap(p) > targets.maxPrefetch || wrap(p) * b > targets.maxWindowSamples)
        .map(([prefetch, batchSize]) => ({ prefetch, batchSize })),
    ),
    kind(2, 'enum', INVALID, () =>
      fc
        .tuple(enumField, fc.constantFrom(1, 2, 5, 1000, 2 ** 31 - 1, -1, -(2 ** 31)))
        .map(([[field, count], past]) => ({ [field]: past > 0 ? count - 1 + past : past })),
    ),
    kind(3, 'dataset-name', INVALID, () =>
      nastyString()
        .filter((s) => !IDENTIFIER.test(s))
        .map((dataset) => ({ dataset })),
    ),
    kind(2, 'unknown-dataset', ['NOT_FOUND'], () =>
      fc.stringMatching(/^[a-z0-9_]{1,40}$/).map((s) => ({ dataset: `qx${s}`, split: 'all' })),
    ),
    kind(3, 'split', ['NOT_FOUND', 'INVALID_ARGUMENT'], () =>
      fc
        .oneof(
          nastyString(),
          fc
            .tuple(
              fc.constantFrom(targets.splitSet, 'nosuchset', 'a'),
              fc.oneof(
                fc.constant(''),
                fc
                  .constantFrom('0', '2', '4294967296', '99999999999999999999', '1e3')
                  .map((v) => `@${v}`),
              ),
              fc.oneof(
                fc.constantFrom('train', 'nosuchpart', 'train-0', 'val-99999999999'),
                nastyString(),
              ),
            )
            .map(([s, v, p]) => `${s}${v}/${p}`),
        )
        .filter(
          (s) =>
            !['all', `${targets.splitSet}/train`, `${targets.splitSet}/val`].includes(s.trim()),
        )
        .map((split) => ({ split })),
    ),
    rawKind(4, 'resume-token', INVALID, () =>
      mutatedToken(targets.token).map(({ bytes, note }): [Req, string] => [
        { ...targets.tokenRequest, resumeToken: bytes },
        note,
      ]),
    ),
    rawKind(3, 'job-checkpoint', INVALID, () =>
      damagedJobCheckpoint(targets.token).map(({ bytes, note }): [Req, string] => [
        { ...targets.tokenRequest, jobCheckpoint: bytes },
        note,
      ]),
    ),
    kind(3, 'transform', ['INVALID_ARGUMENT', 'DATA_LOSS', 'OK'], () =>
      transform.map((t) => ({ transform: t })),
    ),
    rawKind(3, 'anything', ['OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'DATA_LOSS'], () =>
      fc
        .record(
          {
            dataset: fc.oneof(fc.constant(targets.dataset), nastyString()),
            split: fc.oneof(split, nastyString()),
            batchSize: uint32Extreme(),
            seed: uint64Extreme(),
            firstEpoch: uint32Extreme(),
            epochs: uint32Extreme(),
            rank: uint32Extreme(),
            worldSize: uint32Extreme(),
            shardRule: enumNumber(4),
            shuffle: enumNumber(3),
            dropLast: fc.boolean(),
            ordering: enumNumber(3),
            prefetch: uint32Extreme(),
            missingSamplePolicy: enumNumber(3),
            resumeToken: fc.oneof(
              fc.constant(Buffer.alloc(0)),
              mutatedToken(targets.token).map((m) => m.bytes),
            ),
            jobCheckpoint: damagedJobCheckpoint(targets.token).map((m) => m.bytes),
            transform: transform,
          },
          { requiredKeys: ['dataset', 'split'] },
        )
        .map((r): [Req, string] => [r, describe(r)]),
    ),
    kind(1, 'oversized', ['RESOURCE_EXHAUSTED'], () =>
      fc
        .integer({ min: MAX_RECEIVE_MESSAGE_BYTES + 1, max: MAX_RECEIVE_MESSAGE_BYTES + 2 ** 20 })
        .map((n) => ({ dataset: 'd'.repeat(n) })),
    ),
  );
}
