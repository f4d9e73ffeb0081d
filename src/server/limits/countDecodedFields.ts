/** A message type as proto-loader describes it (a DescriptorProto in JSON form). */
export interface MessageShape {
  field: readonly { number: number; type: string; typeName: string; label: string }[];
  /**
   * Types declared inside it: where a map field's entry type lives (named after the field,
   * `Metadata` for `metadata`), found nowhere else.
   */
  nestedType?: readonly (MessageShape & { name: string })[];
}

/** Finds a message type by its full name (`scylla_loader.v1.StreamSource`). */
export type ShapeOf = (typeName: string) => MessageShape | undefined;

/**
 * Counts, without decoding or allocating, what decoding a protobuf body would make: one per
 * scalar, string or bytes field present, one per element of a packed repeated field (bytes
 * are the upper bound), and for each sub-message one plus the fields of its type (the decoder
 * fills in every absent field's default). Stops and returns `budget + 1` as soon as the count
 * passes `budget`. A body that is not valid protobuf is counted as far as it goes; the decoder
 * will refuse it.
 *
 * @internal
 */
export function countDecodedFields(
  body: Uint8Array,
  typeName: string,
  shapeOf: ShapeOf,
  budget: number,
): number {
  const top = shapeOf(typeName);
  if (top === undefined) return 0;
  let count = top.field.length;
  // An explicit stack: nesting depth is up to the client, recursion would be too.
  const stack: { shape: MessageShape; name: string; end: number }[] = [
    { shape: top, name: typeName, end: body.length },
  ];
  let pos = 0;
  // proto-loader names field types as written in the .proto: relative to the enclosing
  // message, then to its package and the packages above, as protobuf scoping does.
  const resolve = (
    name: string,
    scope: string,
    within: MessageShape,
  ): { shape: MessageShape; name: string } | undefined => {
    const nested = within.nestedType?.find((t) => t.name === name);
    if (nested !== undefined) return { shape: nested, name: `${scope}.${name}` };
    if (name.startsWith('.')) {
      const shape = shapeOf(name.slice(1));
      return shape && { shape, name: name.slice(1) };
    }
    for (let outer = scope; ; outer = outer.slice(0, Math.max(0, outer.lastIndexOf('.')))) {
      const full = outer === '' ? name : `${outer}.${name}`;
      const shape = shapeOf(full);
      if (shape !== undefined) return { shape, name: full };
      if (outer === '') return undefined;
    }
  };
  // Skips a group whose start tag was just read, up to its end (nested groups included);
  // false when the body ends first.
  const skipGroup = (): boolean => {
    for (let depth = 1; depth > 0;) {
      const tag = varint();
      if (tag < 0) return false;
      const wire = tag % 8;
      if (wire === 0) {
        if (varint() < 0) return false;
      } else if (wire === 1 || wire === 5) {
        pos += wire === 1 ? 8 : 4;
      } else if (wire === 2) {
        const length = varint();
        if (length < 0) return false;
        pos += length;
      } else if (wire === 3) {
        depth++;
      } else if (wire === 4) {
        depth--;
      } else {
        return false;
      }
      if (pos > body.length) return false;
    }
    return true;
  };
  const varint = (): number => {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (pos >= body.length) return -1;
      const b = body[pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) return value;
      scale *= 128;
    }
    return -1;
  };
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    if (pos >= frame.end) {
      stack.pop();
      continue;
    }
    const tag = varint();
    if (tag < 0) return count;
    const wire = tag % 8;
    const field = frame.shape.field.find((f) => f.number === Math.floor(tag / 8));
    if (wire === 0) {
      if (varint() < 0) return count;
      count += 1;
    } else if (wire === 1 || wire === 5) {
      pos += wire === 1 ? 8 : 4;
      count += 1;
    } else if (wire === 2) {
      const length = varint();
      if (length < 0 || pos + length > frame.end) return count;
      const sub =
        field?.type === 'TYPE_MESSAGE'
          ? resolve(field.typeName, frame.name, frame.shape)
          : undefined;
      if (sub !== undefined) {
        count += 1 + sub.shape.field.length;
        stack.push({ ...sub, end: pos + length });
      } else {
        const packed =
          field !== undefined && field.label === 'LABEL_REPEATED' && isPackable(field.type);
        count += packed ? length : 1;
        pos += length;
      }
    } else if (wire === 3) {
      // A group: proto3 has none, but protobufjs skips an unknown one (allocating nothing) and
      // decodes what follows, so the walk skips it too and goes on counting.
      if (!skipGroup()) return count;
    } else {
      return count; // an end without a start, or wire types 6 and 7: the decoder refuses them
    }
    if (count > budget) return budget + 1;
  }
  return count;
}

function isPackable(type: string): boolean {
  return type !== 'TYPE_STRING' && type !== 'TYPE_BYTES' && type !== 'TYPE_MESSAGE';
}
