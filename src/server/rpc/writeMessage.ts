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

/** Writes that keep at most one message waiting in a call (see {@link oneWriteAhead}). */
export interface PacedWrites {
  /** Starts writing `message`; call {@link PacedWrites.settle} before the next one. */
  write(message: unknown): void;
  /** Waits until the last message was handed to HTTP/2; rejects as its write did. */
  settle(): Promise<void>;
}

/**
 * Backpressure for a server stream: at most one message waits in the call while the next is
 * made. The call's own buffer (an object-mode stream: 16 messages before write() says false)
 * would otherwise let a slow client hold 16 messages. `onBlocked` is told the seconds each
 * settle waited for the client.
 */
export function oneWriteAhead(
  stream: Writable,
  signal: AbortSignal,
  onBlocked: (seconds: number) => void,
): PacedWrites {
  let previous: Promise<void> | undefined;
  return {
    write(message) {
      previous = writeMessage(stream, message, signal);
      previous.catch(() => undefined); // awaited by settle(); never an unhandled rejection
    },
    async settle() {
      if (!previous) return;
      const t0 = performance.now();
      await previous;
      onBlocked((performance.now() - t0) / 1000);
    },
  };
}
