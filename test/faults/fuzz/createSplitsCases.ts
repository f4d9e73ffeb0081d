import fc from 'fast-check';
import { LOADER_REQUEST_LIMITS } from '../../../src/server/index.js';
import { describeRequest, type FuzzCase, type FuzzTargets } from './FuzzCase.js';
import { loaderCodec } from './loaderCodec.js';
import { nastyString, enumNumber, uint32Extreme, uint64Extreme } from './fuzzValues.js';

const NAME = /^[a-z][a-z0-9_-]{0,47}$/;
const IDENTIFIER = /^[a-z][a-z0-9_]{0,47}$/;
const INVALID = ['INVALID_ARGUMENT'] as const;

type Req = Record<string, unknown>;

/** Doubles a weight or ratio should refuse: zero, negatives, NaN, infinities. */
const badNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY),
  fc.double({ max: 0 }),
);

/**
 * Generated CreateSplits requests, each a valid request of `targets` (a unique set name, parts
 * train 7 and val 3) with one kind of damage (`splits:<kind>`, below with the statuses right
 * for it): bad names, parts, folds, class ratios, enum numbers, totals beyond 2^53 and columns,
 * unknown datasets and columns, hostile filter values, every field random.
 *
 * @internal
 */
export function createSplitsCases(targets: FuzzTargets): fc.Arbitrary<FuzzCase> {
  const codec = loaderCodec();
  let serial = 0;
  const make =
    (kind: string, expected: readonly string[]) =>
    (over: Req): FuzzCase => {
      const req: Req = {
        dataset: targets.dataset,
        // A fresh name per case: a valid one creates a set, and must not meet ALREADY_EXISTS.
        name: `fz${process.pid}-${Date.now().toString(36)}-${serial++}`,
        parts: [
          { name: 'train', weight: 7 },
          { name: 'val', weight: 3 },
        ],
        seed: '1',
        ...over,
      };
      const body = codec.encode('CreateSplits', req);
      // Over the method's byte limit, whatever its damage, the body is refused unread.
      const oversized = body.length > LOADER_REQUEST_LIMITS.CreateSplits!.bytes;
      return {
        rpc: 'CreateSplits',
        kind: oversized ? 'splits:oversized' : `splits:${kind}`,
        expected: oversized ? ['RESOURCE_EXHAUSTED'] : expected,
        body,
        note: describeRequest(over),
      };
    };
  const kind = (
    weight: number,
    name: string,
    expected: readonly string[],
    input: () => fc.Arbitrary<Req>,
  ): fc.WeightedArbitrary<FuzzCase> => ({ weight, arbitrary: input().map(make(name, expected)) });
  const part = fc.record({
    name: fc.oneof(fc.constantFrom('train', 'val', 'test'), nastyString()),
    weight: fc.oneof(fc.double(), badNumber),
  });
  const filter = (column: fc.Arbitrary<string>): fc.Arbitrary<Req> =>
    fc.oneof(
      fc.record({
        column,
        equals: fc.oneof(nastyString(), fc.constantFrom('g1', "g1' OR '1'='1")),
      }),
      fc.record({ column, in: fc.record({ values: fc.array(nastyString(), { maxLength: 5 }) }) }),
      fc.record({
        column,
        range: fc.record({ min: fc.double(), max: fc.double() }, { requiredKeys: [] }),
      }),
      fc.record({ column }),
    );

  return fc.oneof(
    kind(2, 'name', INVALID, () =>
      nastyString()
        .filter((s) => !NAME.test(s))
        .map((name) => ({ name })),
    ),
    kind(2, 'dataset-name', INVALID, () =>
      nastyString()
        .filter((s) => !IDENTIFIER.test(s))
        .map((dataset) => ({ dataset })),
    ),
    kind(1, 'unknown-dataset', ['NOT_FOUND'], () =>
      fc.stringMatching(/^[a-z0-9_]{1,40}$/).map((s) => ({ dataset: `qx${s}` })),
    ),
    kind(3, 'parts', INVALID, () =>
      fc
        .oneof(
          fc.constant([]),
          fc.array(fc.record({ name: fc.constantFrom('train', 'val'), weight: badNumber }), {
            minLength: 1,
            maxLength: 3,
          }),
          fc.array(
            fc.record({ name: nastyString().filter((s) => !NAME.test(s)), weight: fc.constant(1) }),
            { minLength: 1, maxLength: 3 },
          ),
          fc.constant([
            { name: 'train', weight: 1 },
            { name: 'train', weight: 2 },
          ]),
          fc.constant([{ name: 'train-0', weight: 1 }]),
        )
        .map((parts) => ({ parts })),
    ),
    kind(2, 'folds', INVALID, () =>
      fc.oneof(
        fc.constant({ folds: 1, parts: [] }),
        uint32Extreme()
          .filter((f) => f >>> 0 > 100)
          .map((folds) => ({ folds, parts: [] })),
        fc.integer({ min: 2, max: 10 }).map((folds) => ({ folds })),
      ),
    ),
    kind(2, 'ratios', INVALID, () =>
      fc.oneof(
        fc
          .tuple(
            fc.dictionary(fc.integer().map(String), fc.double({ min: 0.1, max: 10, noNaN: true }), {
              minKeys: 1,
              maxKeys: 4,
            }),
            fc.constantFrom(0, 1, 2),
          )
          .map(([classRatios, classTargetMode]) => ({ classRatios, classTargetMode })),
        fc
          .dictionary(fc.integer({ min: -5, max: 20 }).map(String), badNumber, {
            minKeys: 1,
            maxKeys: 4,
          })
          .map((classRatios) => ({ classRatios, classTargetMode: 3 })),
        fc.constant({ classRatios: {}, classTargetMode: 3 }),
      ),
    ),
    kind(1, 'enum', INVALID, () =>
      fc.constantFrom(4, 5, 1000, -1, 2 ** 31 - 1).map((classTargetMode) => ({ classTargetMode })),
    ),
    kind(1, 'max-total', INVALID, () =>
      fc
        .constantFrom('9007199254740993', '18446744073709551615', '9223372036854775807')
        .map((maxTotal) => ({ maxTotal })),
    ),
    kind(2, 'columns', INVALID, () =>
      fc.oneof(
        nastyString()
          .filter((s) => !IDENTIFIER.test(s))
          .map((c) => ({ groupBy: [c] })),
        filter(nastyString().filter((s) => !IDENTIFIER.test(s))).map((f) => ({ filters: [f] })),
        fc.constant({ groupBy: ['grp', 'grp'] }),
      ),
    ),
    kind(1, 'unknown-column', ['INVALID_ARGUMENT', 'NOT_FOUND'], () =>
      fc
        .stringMatching(/^[a-z0-9_]{1,30}$/)
        .map((s) => `nx${s}`)
        .chain((c) =>
          fc.oneof(
            fc.constant({ groupBy: [c] }),
            filter(fc.constant(c)).map((f) => ({ filters: [f] })),
          ),
        ),
    ),
    kind(2, 'filter-values', ['OK', 'INVALID_ARGUMENT'], () =>
      filter(fc.constant('grp')).map((f) => ({ filters: [f] })),
    ),
    // Several of its huge strings may together pass the 32 MiB request limit.
    kind(
      2,
      'anything',
      ['OK', 'INVALID_ARGUMENT', 'NOT_FOUND', 'ALREADY_EXISTS', 'RESOURCE_EXHAUSTED'],
      () =>
        fc.record(
          {
            dataset: fc.oneof(fc.constant(targets.dataset), nastyString()),
            name: fc.oneof(fc.constantFrom('fz-any', 'fz_any2'), nastyString()),
            parts: fc.array(part, { maxLength: 4 }),
            folds: uint32Extreme(),
            groupBy: fc.array(fc.oneof(fc.constant('grp'), nastyString()), { maxLength: 3 }),
            classTargetMode: enumNumber(4),
            classRatios: fc.dictionary(fc.integer().map(String), fc.oneof(fc.double(), badNumber), {
              maxKeys: 3,
            }),
            maxTotal: uint64Extreme(),
            filters: fc.array(filter(fc.oneof(fc.constant('grp'), nastyString())), {
              maxLength: 3,
            }),
            seed: uint64Extreme(),
            newVersion: fc.boolean(),
            allowShortfall: fc.boolean(),
          },
          { requiredKeys: [] },
        ),
    ),
  );
}
