import type { BatchColumn, ColumnType } from '../../core/index.js';

/** `Batch.columns` (field 18, length-delimited): its tag as a varint, two bytes. */
const TAG_COLUMNS = [0x92, 0x01] as const;
// Tags of `Column`'s fields: field number << 3 | wire type (0 varint, 1 fixed64, 2 length).
const TAG_NAME = 0x0a;
const TAG_TYPE = 0x10;
const TAG_TEXT = 0x1a;
const TAG_NULLS = 0x42;
/** The packed field of each numeric type. */
const TAG_PACKED: Record<Exclude<ColumnType, 'text'>, number> = {
  int: 0x22,
  bigint: 0x2a,
  double: 0x32,
  boolean: 0x3a,
};

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
 * zero value and its bit set in `nulls` (left out when no value is null). Each column is sized
 * first and written once into one buffer: this runs for every batch of a stream with columns.
 */
export function encodeColumns(columns: readonly BatchColumn[]): Buffer {
  const sized = columns.map(sizeColumn);
  let total = 0;
  for (const c of sized) total += 2 + varintSize(c.size) + c.size;
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  sized.forEach((c, i) => {
    out[pos++] = TAG_COLUMNS[0];
    out[pos++] = TAG_COLUMNS[1];
    pos = writeVarint(out, pos, c.size);
    pos = writeColumn(out, pos, columns[i]!, c);
  });
  if (pos !== total) throw new Error(`encoded ${pos} bytes of ${total} of columns`);
  return out;
}

/** What {@link sizeColumn} works out once, for the write. */
interface SizedColumn {
  size: number;
  name: Buffer;
  /** Text values' UTF-8 bytes (text columns only). */
  texts: Buffer[];
  /** Bytes of the packed values (numeric columns only). */
  packed: number;
  nulls: Buffer | undefined;
}

function sizeColumn({ name, type, values }: BatchColumn): SizedColumn {
  const n = values.length;
  const nameBytes = Buffer.from(name, 'utf8');
  let size = 1 + varintSize(nameBytes.length) + nameBytes.length + 2;
  let nulls: Buffer | undefined;
  for (let i = 0; i < n; i++) {
    if (values[i] !== null) continue;
    nulls ??= Buffer.alloc(Math.ceil(n / 8));
    nulls[i >> 3]! |= 1 << (i & 7);
  }
  const texts: Buffer[] = [];
  let packed = 0;
  if (type === 'text') {
    for (const v of values) {
      const bytes = Buffer.from(typeof v === 'string' ? v : '', 'utf8');
      texts.push(bytes);
      size += 1 + varintSize(bytes.length) + bytes.length;
    }
  } else if (n > 0) {
    if (type === 'double') packed = 8 * n;
    else if (type === 'boolean') packed = n;
    else if (type === 'int') for (const v of values) packed += varintSize(zigzag32(v));
    else for (const v of values) packed += bigVarintSize(zigzag64(v));
    size += 1 + varintSize(packed) + packed;
  }
  if (nulls) size += 1 + varintSize(nulls.length) + nulls.length;
  return { size, name: nameBytes, texts, packed, nulls };
}

function writeColumn(out: Buffer, at: number, column: BatchColumn, c: SizedColumn): number {
  let pos = at;
  out[pos++] = TAG_NAME;
  pos = writeVarint(out, pos, c.name.length);
  pos += c.name.copy(out, pos);
  out[pos++] = TAG_TYPE;
  out[pos++] = TYPE_NUMBERS[column.type];
  const { type, values } = column;
  if (type === 'text') {
    for (const bytes of c.texts) {
      out[pos++] = TAG_TEXT;
      pos = writeVarint(out, pos, bytes.length);
      pos += bytes.copy(out, pos);
    }
  } else if (values.length > 0) {
    out[pos++] = TAG_PACKED[type];
    pos = writeVarint(out, pos, c.packed);
    for (const v of values) {
      if (type === 'double') pos = out.writeDoubleLE(typeof v === 'number' ? v : 0, pos);
      else if (type === 'boolean') out[pos++] = v === true ? 1 : 0;
      else if (type === 'int') pos = writeVarint(out, pos, zigzag32(v));
      else pos = writeBigVarint(out, pos, zigzag64(v));
    }
  }
  if (c.nulls) {
    out[pos++] = TAG_NULLS;
    pos = writeVarint(out, pos, c.nulls.length);
    pos += c.nulls.copy(out, pos);
  }
  return pos;
}

/** An int column's value as its zigzag varint (a null as 0). */
function zigzag32(v: BatchColumn['values'][number]): number {
  const x = typeof v === 'number' ? v | 0 : 0;
  return ((x << 1) ^ (x >> 31)) >>> 0;
}

/** A bigint column's value as its zigzag varint (a null as 0). */
function zigzag64(v: BatchColumn['values'][number]): bigint {
  const x = typeof v === 'bigint' ? BigInt.asIntN(64, v) : BigInt(typeof v === 'number' ? v : 0);
  return BigInt.asUintN(64, (x << 1n) ^ (x >> 63n));
}

/** Bytes of the varint of a non-negative integer up to 2^53. */
function varintSize(value: number): number {
  let size = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) size++;
  return size;
}

function bigVarintSize(value: bigint): number {
  let size = 1;
  for (let v = value; v >= 0x80n; v >>= 7n) size++;
  return size;
}

/** Writes `value` (a non-negative integer up to 2^53) as a varint at `pos`. */
function writeVarint(out: Buffer, pos: number, value: number): number {
  let v = value;
  while (v >= 0x80) {
    out[pos++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[pos++] = v;
  return pos;
}

function writeBigVarint(out: Buffer, pos: number, value: bigint): number {
  let v = value;
  while (v >= 0x80n) {
    out[pos++] = Number(v & 0x7fn) | 0x80;
    v >>= 7n;
  }
  out[pos++] = Number(v);
  return pos;
}
