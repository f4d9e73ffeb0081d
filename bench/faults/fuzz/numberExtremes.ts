import fc from 'fast-check';

/**
 * Numbers for a uint32 field as a careless client would send them: negatives, NaN, infinities,
 * fractions, values past 2^32 and 2^53. The encoder wraps them (`x >>> 0`), so the server sees
 * 0, 2^32 - 1 and the like.
 *
 * @internal
 */
export function uint32Extreme(): fc.Arbitrary<number> {
  return fc.oneof(
    fc.constantFrom(
      0,
      1,
      -1,
      -(2 ** 31),
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 53,
      -(2 ** 53),
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY,
      1.5,
      -0,
    ),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    fc.double(),
  );
}

/**
 * A 64-bit field's value as a decimal string (the loader's proto options read 64-bit integers
 * as strings): 0, 2^64 - 1, int64's extremes, negatives, values past 2^64 that wrap, and
 * `NaN`/`Infinity`, which the encoder reads as 0.
 *
 * @internal
 */
export function uint64Extreme(): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      '0',
      '1',
      '18446744073709551615',
      '9223372036854775807',
      '-9223372036854775808',
      '-1',
      '99999999999999999999999',
      'NaN',
      'Infinity',
      '9007199254740993',
    ),
    fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
    fc.bigInt({ min: -(2n ** 63n), max: -1n }).map(String),
  );
}

/**
 * An enum field's value: its valid numbers and unknown ones (a newer client, or garbage):
 * negatives, just past the last value, and int32's extremes.
 *
 * @internal
 */
export function enumNumber(validCount: number): fc.Arbitrary<number> {
  return fc.oneof(
    fc.integer({ min: 0, max: validCount - 1 }),
    fc.constantFrom(validCount, validCount + 1, -1, 2 ** 31 - 1, -(2 ** 31), 1000),
  );
}
