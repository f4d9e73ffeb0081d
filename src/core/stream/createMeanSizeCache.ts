/** How long a dataset's mean sample size is trusted before it is read again. */
const TTL_MS = 60_000;

/** Mean sample size by dataset (undefined: not recorded), looked up at most once a minute. */
export type MeanSizeCache = (dataset: string) => Promise<number | undefined>;

/**
 * Remembers each dataset's mean sample size (from `read`, e.g. `meanSampleBytes` on the
 * primary route) for a minute of `now` (milliseconds): a stream start does not pay a read for
 * it, and a later ingest is seen soon (it only decides whether reads are grouped). A failed
 * lookup is not remembered: the next stream asks again.
 */
export function createMeanSizeCache(
  read: (dataset: string) => Promise<number | undefined>,
  now: () => number = () => performance.now(),
): MeanSizeCache {
  const known = new Map<string, { at: number; mean: Promise<number | undefined> }>();
  return (dataset) => {
    const at = now();
    const hit = known.get(dataset);
    if (hit && at - hit.at < TTL_MS) return hit.mean;
    const mean = read(dataset);
    known.set(dataset, { at, mean });
    mean.catch(() => known.delete(dataset));
    return mean;
  };
}
