import { describe, expect, it } from 'vitest';
import { streamRamp } from '../../measure/streamRamp.js';

/** Arrival times of `count` batches of 64 at `perSecond` samples/s from `start`. */
function steady(start: number, perSecond: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start + ((i + 1) * 64 * 1000) / perSecond);
}

describe('streamRamp', () => {
  it("measures the second half's rate, and when a 500 ms window first reached 90% of it", () => {
    // 1 s at 320 samples/s (a stream ramping up), then 40 batches at 1,280 samples/s.
    const slow = steady(0, 320, 5);
    const fast = steady(slow.at(-1)!, 1280, 40);
    const arrivals = [...slow, ...fast];
    const ramp = streamRamp(
      0,
      arrivals,
      arrivals.map(() => 64),
    )!;
    expect(ramp.secondHalfSamplesPerSecond).toBeCloseTo(1280, 6);
    // The window is at 90% of 1,280/s once about 450 ms of the fast part are in it.
    expect(ramp.atRateMs).toBeGreaterThan(1000 + 400);
    expect(ramp.atRateMs).toBeLessThan(1000 + 500);
  });

  it('is at rate from its first batches when there is no ramp', () => {
    const arrivals = steady(0, 1000, 40);
    const ramp = streamRamp(
      0,
      arrivals,
      arrivals.map(() => 64),
    )!;
    expect(ramp.secondHalfSamplesPerSecond).toBeCloseTo(1000, 6);
    expect(ramp.atRateMs).toBeCloseTo(64, 6);
  });

  it('says nothing for fewer than four batches', () => {
    expect(streamRamp(0, [1, 2, 3], [64, 64, 64])).toBeUndefined();
  });
});
