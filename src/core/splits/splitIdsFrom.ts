import { createHash } from 'node:crypto';
import type { SplitIds } from './SplitIds.js';
import { sortPackedIds } from './sortPackedIds.js';

/**
 * A split's {@link SplitIds} from its packed 16-byte ids in one or more pieces, in order:
 * joined, sorted by id bytes when `sort` (split `all`, whose rows arrive in token order), and
 * hashed. A pure function of the ids; the pieces may be plain Uint8Arrays (as they arrive on
 * another thread) and are not modified.
 */
export function splitIdsFrom(pieces: readonly Uint8Array[], sort: boolean): SplitIds {
  const bytes = pieces.reduce((a, p) => a + p.byteLength, 0);
  if (bytes % 16 !== 0) throw new RangeError(`${bytes} bytes are not a whole number of ids`);
  const count = bytes / 16;
  const joined =
    pieces.length === 1 ? asBuffer(pieces[0]!) : Buffer.concat(pieces.map(asBuffer), bytes);
  const ids = sort ? sortPackedIds(joined, count) : joined;
  return { ids, count, contentHash: createHash('sha256').update(ids).digest('hex') };
}

/** The same bytes as a Buffer, not copied. @internal */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}
