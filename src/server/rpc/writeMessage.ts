import type { Writable } from 'node:stream';

/**
 * Writes one message and resolves once the call handed it to HTTP/2 (whose flow control
 * then holds it until the client has room); rejects when the write fails or the signal
 * aborts first, so a cancelled stream never waits for a client that left.
 */
export function writeMessage(
  stream: Writable,
  message: unknown,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    stream.write(message, (err) => {
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    });
  });
}
