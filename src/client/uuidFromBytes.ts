const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * Formats the 16 bytes at `offset` of `bytes` as a lower-case UUID string
 * (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`), the form the database and `metadata` use.
 *
 * Not `stringify` of the `uuid` package: that one throws on 16 bytes whose version and variant
 * bits are not those of an RFC 9562 UUID, and a Cassandra `uuid` column holds any 16 bytes (a
 * table filled outside `ingest` may have such ids), which the loader streams as they are. The
 * SDK must hand them to the trainer, not fail the stream.
 *
 * @internal
 */
export function uuidFromBytes(bytes: Uint8Array, offset = 0): string {
  if (!Number.isInteger(offset) || offset < 0 || offset + 16 > bytes.length) {
    throw new RangeError(`no 16 bytes at offset ${offset} of ${bytes.length}`);
  }
  let s = '';
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) {
      s += '-';
    }
    s += HEX[bytes[offset + i] as number];
  }
  return s;
}
