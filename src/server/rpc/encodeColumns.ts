import type { BatchColumn, ColumnType } from '../../core/index.js';

/** `Batch.columns` (field 18, length-delimited): its tag as a varint, two bytes. */
const TAG_COLUMNS = [0x92, 0x01] as const;
// Tags of `Column`'s fields: field number << 3 | wire type (0 varint, 1 fixed64, 2 length).
const TAG_NAME = 0x0a;
const TAG_TYPE = 0x10;
const TAG_TEXT = 0x1a;
const TAG_INT = 0x22;
const TAG_BIGINT = 0x2a;
const TAG_DOUBLE = 0x32;
const TAG_BOOLEAN = 0x3a;
const TAG_NULLS = 0x42;

/** `ColumnType`'s numbers (proto/scylla_loader/v1/loader.proto). */
const TYPE_NUMBERS: Record<ColumnType, number> = {
  text: 1,
  int: 2,
  bigint: 3,
  double: 4,
  boolean: 5,
};

/**
 * Encodes a batch's metadata columns as the `Batch.columns` fields (each a `Column` message
 * behind field 18's tag), ready to be appended to the batch's encoding (see
 * `encodeBatchResponse`): protobuf takes a message's fields in any order. Values are written in
 * the field of the column's type, packed where numeric, with a null's slot holding the type's
 * zero value and its bit set in `nulls` (left out when no value is null).
 */
export function encodeColumns(columns: readonly BatchColumn[]): Buffer {
  const parts: Buffer[] = [];
  for (const column of columns) {
    const body = encodeColumn(column);
    parts.push(Buffer.from(TAG_COLUMNS), varint(body.length), body);
  }
  return Buffer.concat(parts);
}

function encodeColumn({ name, type, values }: BatchColumn): Buffer {
  const n = values.length;
  const parts: Buffer[] = [];
  const nameBytes = Buffer.from(name, 'utf8');
  parts.push(Buffer.from([TAG_NAME]), varint(nameBytes.length), nameBytes);
  parts.push(Buffer.from([TAG_TYPE]), varint(TYPE_NUMBERS[type]));
  const nulls = Buffer.alloc(Math.ceil(n / 8));
  let anyNull = false;
  values.forEach((v, i) => {
    if (v !== null) return;
    nulls[i >> 3]! |= 1 << (i & 7);
    anyNull = true;
  });
  if (type === 'text') {
    for (const v of values) {
      const bytes = Buffer.from(typeof v === 'string' ? v : '', 'utf8');
      parts.push(Buffer.from([TAG_TEXT]), varint(bytes.length), bytes);
    }
  } else if (n > 0) {
    const packed = packValues(type, values);
    const tag = { int: TAG_INT, bigint: TAG_BIGINT, double: TAG_DOUBLE, boolean: TAG_BOOLEAN }[
      type
    ];
    parts.push(Buffer.from([tag]), varint(packed.length), packed);
  }
  if (anyNull) parts.push(Buffer.from([TAG_NULLS]), varint(nulls.length), nulls);
  return Buffer.concat(parts);
}

/** A numeric or boolean column's values, packed (sint32/sint64 zigzag, double LE, bool). */
function packValues(type: Exclude<ColumnType, 'text'>, values: BatchColumn['values']): Buffer {
  if (type === 'double') {
    const out = Buffer.alloc(values.length * 8);
    values.forEach((v, i) => out.writeDoubleLE(typeof v === 'number' ? v : 0, i * 8));
    return out;
  }
  const parts: Buffer[] = values.map((v) => {
    if (type === 'boolean') return varint(v === true ? 1 : 0);
    if (type === 'int') {
      const x = typeof v === 'number' ? v | 0 : 0;
      return varint(((x << 1) ^ (x >> 31)) >>> 0);
    }
    const x = typeof v === 'bigint' ? BigInt.asIntN(64, v) : BigInt(typeof v === 'number' ? v : 0);
    return varint(BigInt.asUintN(64, (x << 1n) ^ (x >> 63n)));
  });
  return Buffer.concat(parts);
}

/** The varint of a non-negative integer (a number up to 2^53, or a bigint up to 2^64). */
function varint(value: number | bigint): Buffer {
  let v = BigInt(value);
  const bytes: number[] = [];
  while (v > 0x7fn) {
    bytes.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  bytes.push(Number(v));
  return Buffer.from(bytes);
}
