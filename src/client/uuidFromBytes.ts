const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * Formats the 16 bytes at `offset` of `bytes` as a lower-case UUID string
 * (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`), the form the database and `metadata` use.
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
