/** Bytes of the gRPC length-prefixed message header: a compressed flag and a big-endian length. */
export const GRPC_FRAME_HEADER_BYTES = 5;

/** Messages whose gRPC frame header sits in the 5 bytes just before them. */
const framedMessages = new WeakSet<Buffer>();

/**
 * Allocates a message of `size` bytes with room for its gRPC frame header in front, and writes
 * that header (uncompressed, length `size`). The caller fills the returned view; the server
 * then sends the header and the message as they are (see `installFramedSend`) instead of
 * letting grpc-js allocate a second buffer and copy the whole message into it, which was most
 * of the gRPC leg's CPU: a fresh 12.8 MB buffer per batch, its page faults, and the copy.
 *
 * @returns A view of the message's `size` bytes (contents uninitialised).
 */
export function allocFramedMessage(size: number): Buffer {
  const framed = Buffer.allocUnsafe(GRPC_FRAME_HEADER_BYTES + size);
  framed[0] = 0;
  framed.writeUInt32BE(size, 1);
  const message = framed.subarray(GRPC_FRAME_HEADER_BYTES);
  framedMessages.add(message);
  return message;
}

/**
 * The header and message of a buffer made by {@link allocFramedMessage}, as one view of the
 * same memory; undefined for any other buffer (and for a message whose header no longer
 * matches its length, so a mistake costs a copy, never a malformed frame).
 */
export function framedBytes(message: Buffer): Buffer | undefined {
  if (!framedMessages.has(message) || message.byteOffset < GRPC_FRAME_HEADER_BYTES) {
    return undefined;
  }
  const framed = Buffer.from(
    message.buffer,
    message.byteOffset - GRPC_FRAME_HEADER_BYTES,
    GRPC_FRAME_HEADER_BYTES + message.length,
  );
  return framed[0] === 0 && framed.readUInt32BE(1) === message.length ? framed : undefined;
}
