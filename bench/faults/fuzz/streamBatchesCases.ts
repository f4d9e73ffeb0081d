import fc from 'fast-check';
import type { FuzzCase, FuzzTargets } from './FuzzCase.js';
import { loaderCodec } from './loaderCodec.js';
import { damagedJobCheckpoint, mutatedToken } from './damagedTokens.js';
import { nastyString, enumNumber, uint32Extreme, uint64Extreme } from './fuzzValues.js';

const IDENTIFIER = /^[a-z][a-z0-9_]{0,47}$/;
const U32 = 2 ** 32 - 1;
const INVALID = ['INVALID_ARGUMENT'] as const;

type Req = Record<string, unknown>;

/**
 * Generated StreamBatches requests, each a valid request of `targets` with one kind of damage
 * and the status that is right for it:
 *
 * - `stream:valid-extremes`: legal but extreme (seeds up to 2^64 - 1, world sizes up to
 *   2^32 - 1, the last epochs of the 32-bit range, stored split versions): OK;
 * - `stream:batch-size`, `stream:rank`, `stream:epochs`, `stream:prefetch`, `stream:enum`
 *   (an unknown ShardRule, ShuffleMode, Ordering or MissingSamplePolicy number),
 *   `stream:dataset-name` (not an identifier), `stream:resume-token` (a real token damaged),
 *   `stream:job-checkpoint` (a job checkpoint damaged or lying): INVALID_ARGUMENT;
 * - `stream:unknown-dataset`: NOT_FOUND; `stream:split` (garbage or unknown split names):
 *   NOT_FOUND or INVALID_ARGUMENT;
 * - `stream:transform` (any transform, on samples that are not images): INVALID_ARGUMENT,
 *   DATA_LOSS or OK; `stream:anything` (every field random): any of those or NOT_FOUND;
 * - `stream:oversized` (a request over the 4 MiB receive limit): RESOURCE_EXHAUSTED.
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
  const describe = (over: Req): string =>
    JSON.stringify(over, (_k, v: unknown) =>
      typeof v === 'string' && v.length > 80
        ? `${v.slice(0, 20)}...(${v.length} chars)`
        : typeof v === 'number' && !Number.isFinite(v)
          ? String(v)
          : Buffer.isBuffer(v)
            ? `<${v.length} bytes>`
            : v,
    );
  const with_ = (over: fc.Arbitrary<Req>): fc.Arbitrary<[Req, string]> =>
    over.map((o) => [base(o), describe(o)]);

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
    { weight: 4, arbitrary: with_(validExtremes).map(make('valid-extremes', ['OK'])) },
    {
      weight: 2,
      arbitrary: with_(
        uint32Extreme()
          .filter((b) => wrap(b) === 0 || wrap(b) > targets.maxBatchSize)
          .map((batchSize) => ({ batchSize })),
      ).map(make('batch-size', INVALID)),
    },
    {
      weight: 2,
      arbitrary: with_(
        fc
          .tuple(uint32Extreme(), uint32Extreme())
          .filter(([rank, world]) => wrap(rank) >= Math.max(wrap(world), 1))
          .map(([rank, worldSize]) => ({ rank, worldSize })),
      ).map(make('rank', INVALID)),
    },
    {
      weight: 2,
      arbitrary: with_(
        fc
          .tuple(uint32Extreme(), uint32Extreme())
          .filter(([first, epochs]) => wrap(first) + Math.max(wrap(epochs), 1) > U32)
          .map(([firstEpoch, epochs]) => ({ firstEpoch, epochs })),
      ).map(make('epochs', INVALID)),
    },
    {
      weight: 2,
      arbitrary: with_(
        fc
          .tuple(uint32Extreme(), fc.integer({ min: 1, max: targets.maxBatchSize }))
          .filter(
            ([p, b]) => wrap(p) > targets.maxPrefetch || wrap(p) * b > targets.maxWindowSamples,
          )
          .map(([prefetch, batchSize]) => ({ prefetch, batchSize })),
      ).map(make('prefetch', INVALID)),
    },
    {
      weight: 2,
      arbitrary: with_(
        fc
          .tuple(enumField, fc.constantFrom(1, 2, 5, 1000, 2 ** 31 - 1, -1, -(2 ** 31)))
          .map(([[field, count], past]) => ({ [field]: past > 0 ? count - 1 + past : past })),
      ).map(make('enum', INVALID)),
    },
    {
      weight: 3,
      arbitrary: with_(
        nastyString()
          .filter((s) => !IDENTIFIER.test(s))
          .map((dataset) => ({ dataset })),
      ).map(make('dataset-name', INVALID)),
    },
    {
      weight: 2,
      arbitrary: with_(
        fc.stringMatching(/^[a-z0-9_]{1,40}$/).map((s) => ({ dataset: `qx${s}`, split: 'all' })),
      ).map(make('unknown-dataset', ['NOT_FOUND'])),
    },
    {
      weight: 3,
      arbitrary: with_(
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
      ).map(make('split', ['NOT_FOUND', 'INVALID_ARGUMENT'])),
    },
    {
      weight: 4,
      arbitrary: mutatedToken(targets.token)
        .map(({ bytes, note }): [Req, string] => [
          { ...targets.tokenRequest, resumeToken: bytes },
          note,
        ])
        .map(make('resume-token', INVALID)),
    },
    {
      weight: 3,
      arbitrary: damagedJobCheckpoint(targets.token)
        .map(({ bytes, note }): [Req, string] => [
          { ...targets.tokenRequest, jobCheckpoint: bytes },
          note,
        ])
        .map(make('job-checkpoint', INVALID)),
    },
    {
      weight: 3,
      arbitrary: with_(transform.map((t) => ({ transform: t }))).map(
        make('transform', ['INVALID_ARGUMENT', 'DATA_LOSS', 'OK']),
      ),
    },
    {
      weight: 3,
      arbitrary: fc
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
        .map((r): [Req, string] => [r, describe(r)])
        .map(make('anything', ['OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'DATA_LOSS'])),
    },
    {
      weight: 1,
      arbitrary: with_(
        fc
          .integer({ min: 4 * 2 ** 20 + 1, max: 6 * 2 ** 20 })
          .map((n) => ({ dataset: 'd'.repeat(n) })),
      ).map(make('oversized', ['RESOURCE_EXHAUSTED'])),
    },
  );
}
