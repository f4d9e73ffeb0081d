/**
 * Hand-made protobuf wire fragments, for requests a generated encoder cannot produce: invalid
 * UTF-8 in a string field, a field sent with the wrong wire type, varints longer than their
 * type. Appended to a valid message they override its field (the last value of a scalar wins).
 *
 * @internal
 */
export const protoWire = {
  /** A varint of any unsigned value below 2^64 (a negative int64 is its two's complement). */
  varint(value: bigint): Buffer {
    let v = BigInt.asUintN(64, value);
    const out: number[] = [];
    do {
      const low = Number(v & 0x7fn);
      v >>= 7n;
      out.push(v > 0n ? low | 0x80 : low);
    } while (v > 0n);
    return Buffer.from(out);
  },
  /** Field `field` as a varint (wire type 0). */
  varintField(field: number, value: bigint): Buffer {
    return Buffer.concat([protoWire.varint(BigInt(field << 3)), protoWire.varint(value)]);
  },
  /** Field `field` as length-delimited bytes (wire type 2): strings, bytes, messages. */
  bytesField(field: number, bytes: Uint8Array): Buffer {
    return Buffer.concat([
      protoWire.varint(BigInt((field << 3) | 2)),
      protoWire.varint(BigInt(bytes.length)),
      bytes,
    ]);
  },
  /** Field `field` as a 64-bit fixed value (wire type 1), e.g. a double's bits. */
  fixed64Field(field: number, bits: bigint): Buffer {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt.asUintN(64, bits));
    return Buffer.concat([protoWire.varint(BigInt((field << 3) | 1)), b]);
  },
};
