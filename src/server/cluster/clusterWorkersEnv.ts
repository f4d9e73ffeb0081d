/** Environment variable telling a worker how many workers share the machine's CPUs. */
export const CLUSTER_WORKERS_ENV = 'SCYLLA_LOADER_CLUSTER_WORKERS';

/**
 * How many processes share this one's CPU quota: N in a worker of `serve --workers N` (the
 * primary sets {@link CLUSTER_WORKERS_ENV}), otherwise 1.
 */
export function clusterWorkersFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const workers = Number(env[CLUSTER_WORKERS_ENV]);
  return Number.isInteger(workers) && workers > 1 ? workers : 1;
}
