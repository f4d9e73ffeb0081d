import fc from 'fast-check';
import { encodeJobCheckpoint, type JobCheckpointMessage } from '../../../src/proto/index.js';

/**
 * A job checkpoint that the server must refuse, built around a real resume token of world
 * size 1: its bytes truncated or replaced by random bytes, or a well-formed message that
 * lies (world size 0 or over 65,536, a rank missing, twice or out of range, a damaged token
 * inside, bases nested past 32). Every one is INVALID_ARGUMENT: a checkpoint is either the
 * bytes mergeResumeTokens made or refused, never half-used.
 *
 * @internal
 */
export function damagedJobCheckpoint(token: Buffer): fc.Arbitrary<{ bytes: Buffer; note: string }> {
  const rank0 = { rank: 0, epoch: 0, resumeToken: token };
  const good = encodeJobCheckpoint({ worldSize: 1, ranks: [rank0] });
  const nested = (depth: number): JobCheckpointMessage => {
    let cp: JobCheckpointMessage = { worldSize: 1, ranks: [rank0] };
    for (let i = 0; i < depth; i++) cp = { worldSize: 1, ranks: [rank0], base: cp };
    return cp;
  };
  const lie = (cp: JobCheckpointMessage, note: string): { bytes: Buffer; note: string } => ({
    bytes: encodeJobCheckpoint(cp),
    note,
  });
  return fc
    .oneof(
      fc.integer({ min: 1, max: good.length - 1 }).map((n) => ({
        bytes: good.subarray(0, n),
        note: `checkpoint truncated to ${n} of ${good.length} bytes`,
      })),
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => ({
        bytes: Buffer.from(b),
        note: `checkpoint of ${b.length} random bytes`,
      })),
      fc
        .constantFrom(0, 65_537, 2 ** 32 - 1)
        .map((w) => lie({ worldSize: w, ranks: [rank0] }, `checkpoint world size ${w}`)),
      fc
        .integer({ min: 2, max: 64 })
        .map((w) => lie({ worldSize: w, ranks: [rank0] }, `checkpoint world ${w}, only rank 0`)),
      fc.constant(lie({ worldSize: 1, ranks: [rank0, rank0] }, 'checkpoint lists rank 0 twice')),
      fc
        .integer({ min: 1, max: 2 ** 32 - 1 })
        .map((r) =>
          lie({ worldSize: 1, ranks: [{ ...rank0, rank: r }] }, `checkpoint rank ${r} of world 1`),
        ),
      mutatedToken(token).map((m) =>
        lie(
          { worldSize: 1, ranks: [{ ...rank0, resumeToken: m.bytes }] },
          `checkpoint token ${m.note}`,
        ),
      ),
      fc
        .integer({ min: 33, max: 64 })
        .map((d) => lie(nested(d), `checkpoint with ${d} nested bases`)),
    )
    .filter((c) => c.bytes.length > 0);
}

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
