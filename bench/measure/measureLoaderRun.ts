import type { BenchChild } from '../stream/startBenchChild.js';
import { cpuMeter, peakRssBytes, resetPeakRss, rssBytes } from '../../test/support/index.js';

/**
 * Runs a started trainer child against a loader process (none: a tight loop) and measures the
 * loader around the child's measured part only: waits until the child is ready, resets the
 * loader's peak RSS, starts the CPU meters of loader and database, lets the child go, and reads
 * them all when its result arrives (undefined: not measurable here). The child is stopped
 * whatever happens; an abort stops it at once and rethrows the abort reason. Every loader
 * benchmark measures through this. @internal
 */
export async function measureLoaderRun<R>(
  child: BenchChild<R>,
  pids: { loader?: number | undefined; db: number | undefined },
  signal?: AbortSignal,
) {
  const onAbort = (): void => void child.stop();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await child.ready;
    signal?.throwIfAborted();
    const { loader } = pids;
    const loaderRssBeforeBytes = loader === undefined ? undefined : rssBytes(loader);
    const reset = loader !== undefined && resetPeakRss(loader);
    const meter = cpuMeter({ loader, db: pids.db });
    child.go();
    const result = await child.result;
    const cpu = meter();
    return {
      result,
      cpu: { loader: cpu['loader'], db: cpu['db'] },
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
