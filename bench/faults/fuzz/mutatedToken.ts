import fc from 'fast-check';

/**
 * A real resume token damaged: truncated, bit-flipped, extended, spliced with random bytes, or
 * replaced by random bytes of a similar size. Never empty (an empty token means "start") and
 * never the token itself.
 *
 * @internal
 */
export function mutatedToken(token: Buffer): fc.Arbitrary<{ bytes: Buffer; note: string }> {
  const n = token.length;
  return fc
    .oneof(
      fc.integer({ min: 1, max: n - 1 }).map((len) => ({
        bytes: token.subarray(0, len),
        note: `truncated to ${len} of ${n} bytes`,
      })),
      fc.array(fc.tuple(fc.nat(n - 1), fc.nat(7)), { minLength: 1, maxLength: 8 }).map((flips) => {
        const b = Buffer.from(token);
        for (const [i, bit] of flips) b[i]! ^= 1 << bit;
        return {
          bytes: b,
          note: `bits flipped at ${flips.map(([i, bit]) => `${i}.${bit}`).join(',')}`,
        };
      }),
      fc.uint8Array({ minLength: 1, maxLength: 64 }).map((extra) => ({
        bytes: Buffer.concat([token, extra]),
        note: `extended by ${extra.length} bytes`,
      })),
      fc.tuple(fc.nat(n - 1), fc.uint8Array({ minLength: 1, maxLength: 16 })).map(([at, junk]) => {
        const b = Buffer.from(token);
        Buffer.from(junk).copy(b, at);
        return { bytes: b, note: `${junk.length} bytes overwritten at ${at}` };
      }),
      fc.uint8Array({ minLength: 1, maxLength: n * 2 }).map((r) => ({
        bytes: Buffer.from(r),
        note: `${r.length} random bytes`,
      })),
    )
    .filter((m) => m.bytes.length > 0 && !m.bytes.equals(token));
}
