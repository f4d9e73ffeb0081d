/** How long a stream took to reach its rate, from when each batch arrived. */
export interface StreamRamp {
  /**
   * Samples per second over the second half of the batches (from the arrival of the middle
   * one to the last): the rate once the start is over, whatever the round trip.
   */
  secondHalfSamplesPerSecond: number;
  /**
   * Time from the call's start until the samples of the last `windowMs` first came at 90% of
   * that rate or more, ms.
   */
  atRateMs: number;
}

/** The share of the second half's rate a window must reach to count as at rate. */
export const AT_RATE_SHARE = 0.9;

/**
 * The second half's rate and the time the stream reached 90% of it, from each batch's arrival
 * time (`arrivedAt`, ms, increasing) and size, the call having started at `t0`. Undefined for
 * fewer than 4 batches. @internal
 */
export function streamRamp(
  t0: number,
  arrivedAt: readonly number[],
  sizes: readonly number[],
  windowMs = 500,
): StreamRamp | undefined {
  const n = arrivedAt.length;
  if (n < 4 || sizes.length !== n) return undefined;
  const mid = Math.floor(n / 2);
  let late = 0;
  for (let i = mid; i < n; i++) late += sizes[i]!;
  const span = arrivedAt[n - 1]! - arrivedAt[mid - 1]!;
  if (!(span > 0)) return undefined;
  const rate = late / span; // samples per ms
  // Samples that arrived within the window ending at each batch: a sliding sum.
  let from = 0;
  let inWindow = 0;
  for (let i = 0; i < n; i++) {
    inWindow += sizes[i]!;
    const now = arrivedAt[i]!;
    while (arrivedAt[from]! <= now - windowMs) inWindow -= sizes[from++]!;
    // A window that began before the call counts only the time since it.
    const width = Math.min(windowMs, now - t0);
    if (width > 0 && inWindow / width >= AT_RATE_SHARE * rate) {
      return { secondHalfSamplesPerSecond: rate * 1000, atRateMs: now - t0 };
    }
  }
  return { secondHalfSamplesPerSecond: rate * 1000, atRateMs: arrivedAt[n - 1]! - t0 };
}
