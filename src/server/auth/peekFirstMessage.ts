import type { Readable } from 'node:stream';

/** What {@link peekFirstMessage} found. */
export type FirstMessage<T> =
  | { kind: 'message'; message: T }
  /** The client half-closed without sending a message. */
  | { kind: 'none' }
  /** The call was cancelled (or failed) while waiting. */
  | { kind: 'cancelled' };

/**
 * Reads the first message of a client-streaming or bidirectional call and puts it back at
 * the front of the call's buffer, so the handler that runs next reads it as if nothing had
 * happened: for an authorization that depends on a field of the first message (the dataset of
 * IngestSamples). The call is left paused (non-flowing), as a handler that iterates it
 * expects.
 *
 * @internal
 */
export function peekFirstMessage<T>(
  call: Readable & { on(event: 'cancelled', listener: () => void): unknown },
): Promise<FirstMessage<T>> {
  return new Promise((resolve) => {
    const finish = (result: FirstMessage<T>): void => {
      call.off('readable', onReadable);
      call.off('end', onEnd);
      call.off('error', onCancelled);
      call.off('close', onCancelled);
      call.off('cancelled', onCancelled);
      if (result.kind === 'message') call.unshift(result.message);
      resolve(result);
    };
    const onReadable = (): void => {
      const message = call.read() as T | null;
      if (message !== null) finish({ kind: 'message', message });
    };
    const onEnd = (): void => finish({ kind: 'none' });
    const onCancelled = (): void => finish({ kind: 'cancelled' });
    call.on('readable', onReadable);
    call.once('end', onEnd);
    call.once('error', onCancelled);
    call.once('close', onCancelled);
    call.once('cancelled', onCancelled);
  });
}
