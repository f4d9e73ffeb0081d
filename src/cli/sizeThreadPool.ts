/**
 * Sizes libuv's thread pool for server-side transforms, before anything uses it: the pool's
 * size is read once, when the process first queues work on it (a file read, a DNS lookup, a
 * sharp decode), so this module is the CLI's first import. The size lets one transform per CPU
 * of the process's quota (cgroup-aware; a worker of `serve --workers N` gets 1/N of it), or `SCYLLA_LOADER_TRANSFORM_CONCURRENCY` of them, run
 * at once and leaves two threads for file system and DNS work. A `UV_THREADPOOL_SIZE` set by
 * the operator is kept.
 */
import {
  defaultTransformSlots,
  readWorkerCpuQuota,
  threadPoolSizeFor,
} from '../core/transform/cpuQuota.js';
import { clusterWorkersFromEnv } from '../server/cluster/clusterWorkersEnv.js';

if (process.env.UV_THREADPOOL_SIZE === undefined) {
  const configured = Number(process.env.SCYLLA_LOADER_TRANSFORM_CONCURRENCY);
  const slots =
    Number.isInteger(configured) && configured > 0
      ? configured
      : defaultTransformSlots(readWorkerCpuQuota(clusterWorkersFromEnv()));
  process.env.UV_THREADPOOL_SIZE = String(threadPoolSizeFor(slots));
}
