/**
 * How long a read waits before its next attempt, after `attempt` attempts failed: `baseMs`
 * doubled for each attempt after the first, times a jitter factor in [0.5, 1.5) drawn from
 * `random` (so the retries of a burst of failures spread out instead of striking together).
 * It grows with the attempts only as far as the stream's `readAttempts` lets them go.
 */
export function retryBackoffMs(
  attempt: number,
  baseMs: number,
  random: () => number = Math.random,
): number {
  return baseMs * 2 ** (attempt - 1) * (0.5 + random());
}
