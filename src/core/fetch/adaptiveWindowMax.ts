import type { StreamLimits } from '../config/streamLimits.js';

/**
 * How far an adaptive window may grow: enough positions for the stream's full in-flight
 * allowance plus two batches arriving or waiting to be sent (so that at a long round trip the
 * in-flight limit, not the window, bounds the reads), within the server's largest prefetch and
 * the per-stream window limit.
 */
export function adaptiveWindowMax(
  batchSize: number,
  limits: Pick<StreamLimits, 'maxPrefetch' | 'maxWindowSamples' | 'maxInFlightPerStream'>,
): number {
  return Math.min(
    limits.maxPrefetch * batchSize,
    limits.maxWindowSamples,
    limits.maxInFlightPerStream + 2 * batchSize,
  );
}
