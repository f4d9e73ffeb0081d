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

/** Pieces that break naive CQL or name handling: quotes, terminators, comments, odd unicode. */
const PIECES = [
  "'",
  '"',
  ';',
  '--',
  '/*',
  '*/',
  '$$',
  '\\',
  '%',
  '\0',
  ' ',
  '\n',
  '.',
  '/',
  '@',
  'ä',
  '数据',
  '😀',
  '\u202e',
  '\ufffd',
  '\ud800',
  'a',
  'z',
  '1',
  '_',
  '-',
  'DROP KEYSPACE system',
  ' OR 1=1',
];

/**
 * Strings a name field should refuse or not find: CQL metacharacters and keywords, control
 * characters, lone surrogates (sent as U+FFFD after UTF-8 encoding), emoji and right-to-left
 * marks, names over the 48-character limit, anything in the full code point range, and a few
 * of 100 KB to 1 MB (under the 32 MiB request limit).
 *
 * @internal
 */
export function nastyString(): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 12 })
        .map((a) => a.join('')),
    },
    { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 64 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "x'; DROP KEYSPACE system; --",
        'a"b',
        'Mnist',
        '1abc',
        '',
        ' ',
        'select',
        'system_auth',
        'a'.repeat(49),
      ),
    },
    { weight: 1, arbitrary: fc.integer({ min: 49, max: 5000 }).map((n) => 'b'.repeat(n)) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 100_000, max: 1_000_000 }), fc.constantFrom('é', "'", '\u0000'))
        .map(([n, c]) => c.repeat(n)),
    },
  );
}
