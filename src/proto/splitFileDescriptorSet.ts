/**
 * The encoded `FileDescriptorProto`s of an encoded `google.protobuf.FileDescriptorSet`, byte for
 * byte as they were written (server reflection serves files, not sets). The set holds only
 * `repeated FileDescriptorProto file = 1`, so each entry is a tag byte 0x0A, a varint length
 * and that many bytes; anything else means the input is not a descriptor set.
 */
export function splitFileDescriptorSet(set: Uint8Array): Buffer[] {
  const bytes = Buffer.from(set.buffer, set.byteOffset, set.byteLength);
  const files: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (bytes[at] !== 0x0a) {
      throw new Error(
        `not a FileDescriptorSet: byte ${at} is 0x${bytes[at]!.toString(16)} where a file ` +
          'entry (0x0a) should start',
      );
    }
    at++;
    let length = 0;
    for (let shift = 0; ; shift += 7) {
      if (at >= bytes.length || shift > 28) {
        throw new Error(`not a FileDescriptorSet: bad length varint before byte ${at}`);
      }
      const b = bytes[at++]!;
      length += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) break;
    }
    if (at + length > bytes.length) {
      throw new Error(
        `not a FileDescriptorSet: a file entry of ${length} bytes at byte ${at} runs past the ` +
          `end (${bytes.length} bytes); the file is truncated`,
      );
    }
    files.push(bytes.subarray(at, at + length));
    at += length;
  }
  return files;
}
