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
