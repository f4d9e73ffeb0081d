import type { BenchChild } from '../stream/startBenchChild.js';
import { cpuMeter, peakRssBytes, resetPeakRss, rssBytes } from '../../test/support/index.js';
import { startGaugeSampler } from './gaugeSampler.js';

/**
 * Runs a started trainer child against a loader process (none: a tight loop) and measures the
 * loader around the child's measured part only: waits until the child is ready, resets the
 * loader's peak RSS, starts the CPU meters of loader, database and proxy (those it is given) and
 * the sampling of the loader's gauges (when asked), lets the child go, and reads
 * them all when its result arrives (undefined: not measurable here). The child is stopped
 * whatever happens; an abort stops it at once and rethrows the abort reason. Every loader
 * benchmark measures through this. @internal
 */
export async function measureLoaderRun<R>(
  child: BenchChild<R>,
  pids: { loader?: number | undefined; db: number | undefined; proxy?: number | undefined },
  signal?: AbortSignal,
  /** The loader's `/metrics`, and the gauges to sample there during the measured part. */
  gauges?: { metricsAddress: string; names: readonly string[] },
) {
  const onAbort = (): void => void child.stop();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await child.ready;
    signal?.throwIfAborted();
    const { loader } = pids;
    const loaderRssBeforeBytes = loader === undefined ? undefined : rssBytes(loader);
    const reset = loader !== undefined && resetPeakRss(loader);
    const meter = cpuMeter({ loader, db: pids.db, proxy: pids.proxy });
    const sampler =
      gauges === undefined ? undefined : startGaugeSampler(gauges.metricsAddress, gauges.names);
    child.go();
    const result = await child.result.catch(async (err: unknown) => {
      await sampler?.stop();
      throw err;
    });
    // CPU first: stopping the sampler may wait for a scrape in progress.
    const cpu = meter();
    return {
      result,
      cpu: { loader: cpu['loader'], db: cpu['db'], proxy: cpu['proxy'] },
      gauges: await sampler?.stop(),
      loaderPeakRssBytes: reset ? peakRssBytes(loader!) : undefined,
      loaderRssBeforeBytes,
      loaderRssAfterBytes: loader === undefined ? undefined : rssBytes(loader),
    };
  } catch (err) {
    signal?.throwIfAborted();
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await child.stop();
  }
}
