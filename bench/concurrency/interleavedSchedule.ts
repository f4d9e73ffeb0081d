/**
 * The order of the measured runs: `runs` rounds, each measuring every k once, round r starting
 * at the r-th k (rotated), so that slow phases of a shared machine spread over all k and no k
 * always goes first after a pause. @internal
 */
export function interleavedSchedule(
  streams: readonly number[],
  runs: number,
): { streams: number; run: number }[] {
  const order: { streams: number; run: number }[] = [];
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < streams.length; i++) {
      order.push({ streams: streams[(i + run) % streams.length]!, run });
    }
  }
  return order;
}
