/** Wall and CPU time a benchmark child spent in its measured part. */
export interface SelfMeasure {
  wallSeconds: number;
  /** User + system CPU seconds of this process, all threads. */
  cpuSeconds: number;
}

/**
 * Starts measuring this process: the returned function gives the wall and CPU seconds since
 * the call. Every benchmark child times its measured part with it, so the figures of different
 * benchmarks mean the same thing. @internal
 */
export function startSelfMeasure(): () => SelfMeasure {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  return () => {
    const wallSeconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    return { wallSeconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 };
  };
}
