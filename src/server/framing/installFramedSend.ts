import { createRequire } from 'node:module';
import { framedBytes } from './allocFramedMessage.js';

/** The part of grpc-js's server call this relies on (build/src/server-interceptors.js). */
interface ServerCallPrototype {
  serializeMessage(this: unknown, value: unknown): Buffer;
}

let installed: boolean | undefined;

/**
 * Lets the server send a message made by `allocFramedMessage` with its frame header as one
 * buffer, without the copy grpc-js makes of every message: its server call serializes a
 * message and then allocates a new buffer of the length plus 5 and copies the message behind
 * the header, which for a 12.8 MB batch cost more CPU than sending it (`bench ceiling`).
 * grpc-js has no public hook for that step, so this wraps its `serializeMessage` (1.10 to
 * 1.14 at least): messages made by `allocFramedMessage` go out as they are, everything else
 * (other methods, health, reflection, response objects) goes through grpc-js unchanged.
 * Idempotent. When a grpc-js version lacks the method, nothing is changed and messages are
 * copied as before: the saving is lost, never correctness.
 *
 * @returns Whether framed messages are sent without the copy.
 */
export function installFramedSend(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  let proto: Partial<ServerCallPrototype> | undefined;
  try {
    // The same module instance `@grpc/grpc-js` loads: both resolve from this package.
    const require = createRequire(import.meta.url);
    const mod = require('@grpc/grpc-js/build/src/server-interceptors.js') as {
      BaseServerInterceptingCall?: { prototype: Partial<ServerCallPrototype> };
    };
    proto = mod.BaseServerInterceptingCall?.prototype;
  } catch {
    return installed;
  }
  const original = proto?.serializeMessage;
  if (!proto || typeof original !== 'function' || original.length !== 1) return installed;
  proto.serializeMessage = function serializeMessage(this: unknown, value: unknown): Buffer {
    return (Buffer.isBuffer(value) && framedBytes(value)) || original.call(this, value);
  };
  installed = true;
  return installed;
}
