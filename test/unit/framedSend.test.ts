import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import {
  allocFramedMessage,
  framedBytes,
  GRPC_FRAME_HEADER_BYTES,
} from '../../src/server/framing/allocFramedMessage.js';
import { installFramedSend } from '../../src/server/framing/installFramedSend.js';

/** grpc-js's own server call class, the one `installFramedSend` hooks. */
const { BaseServerInterceptingCall } = createRequire(import.meta.url)(
  '@grpc/grpc-js/build/src/server-interceptors.js',
) as {
  BaseServerInterceptingCall: { prototype: { serializeMessage(value: unknown): Buffer } };
};

/** What grpc-js's server call reads in `serializeMessage`: its handler's serializer. */
const fakeCall = { handler: { serialize: (value: Buffer): Buffer => value } };
const serialize = (value: unknown): Buffer =>
  BaseServerInterceptingCall.prototype.serializeMessage.call(fakeCall, value);

describe('allocFramedMessage', () => {
  it('puts the gRPC frame header just before the message', () => {
    const message = allocFramedMessage(70_000);
    message.fill(7);
    const framed = framedBytes(message)!;
    expect(framed.length).toBe(GRPC_FRAME_HEADER_BYTES + 70_000);
    expect(framed[0]).toBe(0); // not compressed
    expect(framed.readUInt32BE(1)).toBe(70_000);
    // The same memory, not a copy.
    expect(framed.buffer).toBe(message.buffer);
    expect(framed.byteOffset + GRPC_FRAME_HEADER_BYTES).toBe(message.byteOffset);
    expect(framed.subarray(GRPC_FRAME_HEADER_BYTES).equals(message)).toBe(true);
  });

  it('frames small messages (from the shared pool) and empty ones too', () => {
    for (const size of [0, 1, 100]) {
      const framed = framedBytes(allocFramedMessage(size))!;
      expect(framed.length).toBe(GRPC_FRAME_HEADER_BYTES + size);
      expect(framed.readUInt32BE(1)).toBe(size);
    }
  });

  it('knows no other buffer, not even a copy or a slice of a framed one', () => {
    const message = allocFramedMessage(64).fill(1);
    expect(framedBytes(Buffer.from(message))).toBeUndefined();
    expect(framedBytes(message.subarray(1))).toBeUndefined();
    expect(framedBytes(Buffer.alloc(64))).toBeUndefined();
  });

  it('refuses a message whose header was overwritten', () => {
    const message = allocFramedMessage(64);
    Buffer.from(message.buffer, message.byteOffset - GRPC_FRAME_HEADER_BYTES, 1)[0] = 1;
    expect(framedBytes(message)).toBeUndefined();
  });
});

describe('installFramedSend', () => {
  it('hooks the installed grpc-js server call (an upgrade that moves it fails here)', () => {
    expect(installFramedSend()).toBe(true);
    expect(installFramedSend()).toBe(true); // idempotent: not wrapped twice
  });

  it('sends a framed message as it is, without a copy', () => {
    installFramedSend();
    const message = allocFramedMessage(1_000).fill(3);
    const sent = serialize(message);
    expect(sent.buffer).toBe(message.buffer);
    expect(sent.readUInt32BE(1)).toBe(1_000);
    expect(sent.subarray(GRPC_FRAME_HEADER_BYTES).equals(message)).toBe(true);
  });

  it('leaves any other message to grpc-js, which frames a copy', () => {
    installFramedSend();
    const message = Buffer.alloc(1_000, 5);
    const sent = serialize(message);
    expect(sent.buffer).not.toBe(message.buffer);
    expect(sent[0]).toBe(0);
    expect(sent.readUInt32BE(1)).toBe(1_000);
    expect(sent.subarray(GRPC_FRAME_HEADER_BYTES).equals(message)).toBe(true);
  });
});
