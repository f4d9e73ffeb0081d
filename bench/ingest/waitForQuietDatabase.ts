import { setTimeout as sleep } from 'node:timers/promises';
import { totalCpuSeconds } from '../../test/support/index.js';

/**
 * Waits until the database processes use less than `thresholdCores` over a `windowMs` window,
 * or `maxMs` has passed. After a run Cassandra keeps flushing memtables and compacting for a
 * few seconds; measured straight away, the next run would pay for that work. Returns how long
 * it waited and whether the database did go quiet. Without pids there is nothing to watch.
 * @internal
 */
export async function waitForQuietDatabase(
  pids: readonly number[],
  options: { maxMs: number; thresholdCores?: number; windowMs?: number; signal?: AbortSignal },
): Promise<{ seconds: number; quiet: boolean }> {
  const started = performance.now();
  const threshold = options.thresholdCores ?? 0.25;
  const windowMs = options.windowMs ?? 1000;
  if (pids.length === 0) return { seconds: 0, quiet: true };
  for (;;) {
    const before = totalCpuSeconds(pids);
    const t0 = performance.now();
    await sleep(windowMs, undefined, options.signal ? { signal: options.signal } : {});
    const after = totalCpuSeconds(pids);
    const seconds = (performance.now() - started) / 1000;
    if (before === undefined || after === undefined) return { seconds, quiet: false };
    const cores = (after - before) / ((performance.now() - t0) / 1000);
    if (cores < threshold) return { seconds, quiet: true };
    if (performance.now() - started >= options.maxMs) return { seconds, quiet: false };
  }
}
