/**
 * Sorts `count` packed 16-byte ids by their bytes (the order `Buffer.compare` gives), into a new
 * packed buffer. Each id is compared as four big-endian 32-bit words in plain arrays, so a
 * million ids need no object per id (a Buffer each would cost about 100 bytes of heap apiece).
 */
export function sortPackedIds(ids: Buffer, count: number): Buffer {
  if (ids.length < count * 16) {
    throw new RangeError(`${ids.length} bytes cannot hold ${count} ids of 16 bytes`);
  }
  const words = new Uint32Array(count * 4);
  for (let i = 0; i < count * 4; i++) words[i] = ids.readUInt32BE(i * 4);
  const order = new Uint32Array(count);
  for (let i = 0; i < count; i++) order[i] = i;
  order.sort((a, b) => {
    for (let k = 0; k < 4; k++) {
      const x = words[a * 4 + k]!;
      const y = words[b * 4 + k]!;
      if (x !== y) return x < y ? -1 : 1;
    }
    return 0;
  });
  const out = Buffer.allocUnsafe(count * 16);
  for (let j = 0; j < count; j++) {
    const from = order[j]! * 4;
    for (let k = 0; k < 4; k++) out.writeUInt32BE(words[from + k]!, j * 16 + k * 4);
  }
  return out;
}
