import { setTimeout as sleep } from 'node:timers/promises';
import type { ClientError } from './ClientError.js';
import type { ReconnectInfo } from './StreamCallOptions.js';

/**
 * Delay before reconnection attempt `attempt` (1 for the first): exponential from
 * `initialBackoffMs`, capped at `maxBackoffMs`, with "equal jitter" (a uniform draw from the
 * upper half), so many trainers dropped by one loader do not come back in lockstep while each
 * still waits at least half the nominal delay. Within [ceiling / 2, ceiling] where
 * `ceiling = min(maxBackoffMs, initialBackoffMs * 2^(attempt - 1))`.
 *
 * @param random - Source of uniform numbers in [0, 1) (tests pass a fixed one).
 * @internal
 */
export function backoffDelay(
  attempt: number,
  options: { initialBackoffMs: number; maxBackoffMs: number },
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, attempt - 1);
  const ceiling = Math.min(options.maxBackoffMs, options.initialBackoffMs * 2 ** exponent);
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

/**
 * The pause before reconnection attempt `attempt` after `error`: the backoff delay, cut short
 * by the deadline (a deadline reached while waiting makes the next call fail at once with
 * DEADLINE_EXCEEDED), reported to `onReconnect` first. An abort while waiting rejects with the
 * signal's own reason, as an abort during a call does, not with a generic AbortError.
 * @internal
 */
export async function pauseBeforeReconnect(
  attempt: number,
  error: ClientError,
  options: {
    reconnect: { initialBackoffMs: number; maxBackoffMs: number };
    deadlineMs: number;
    onReconnect?: ((info: ReconnectInfo) => void) | undefined;
    signal?: AbortSignal | undefined;
  },
): Promise<void> {
  const delayMs = Math.min(
    backoffDelay(attempt, options.reconnect),
    Math.max(0, options.deadlineMs - Date.now()),
  );
  options.onReconnect?.({
    attempt,
    code: error.code,
    codeName: error.codeName,
    details: error.details,
    delayMs,
  });
  try {
    await sleep(delayMs, undefined, { signal: options.signal });
  } catch (err) {
    options.signal?.throwIfAborted();
    throw err;
  }
}
