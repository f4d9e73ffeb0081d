import fc from 'fast-check';

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
 * of 100 KB to 1 MB (under the 4 MiB request limit).
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
