import { readCpuQuota } from '../../core/index.js';

/** Most workers `serve --workers` starts: beyond the cores, processes only add memory. */
export const MAX_WORKERS = 256;

/**
 * The number of loader workers: `requested` when set (1 to {@link MAX_WORKERS}), else one per
 * CPU the process may use, the cgroup quota included (a container limited to 2.5 CPUs on a
 * 64-core host gets 2, never 64), at least 1.
 */
export function resolveWorkerCount(requested: number, quota: number = readCpuQuota()): number {
  if (requested > 0) return Math.min(requested, MAX_WORKERS);
  return Math.max(1, Math.min(MAX_WORKERS, Math.floor(quota + 1e-9)));
}
