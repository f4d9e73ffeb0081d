import type { Writable } from 'node:stream';

/**
 * Resolves when a stream that refused more data ('write' returned false) drained, and rejects
 * when the signal aborts first, so a cancelled stream never waits for a client that left.
 */
export function waitForDrain(stream: Writable, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onDrain = (): void => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    };
    const onAbort = (): void => {
      stream.off('drain', onDrain);
      reject(signal.reason);
    };
    stream.once('drain', onDrain);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
