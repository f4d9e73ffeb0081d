import { readFileSync } from 'node:fs';
import os from 'node:os';

/** The cgroup files that cap a container's CPU, as read (absent: undefined). */
export interface CgroupCpuFiles {
  /** cgroup v2 `cpu.max`: `<quota|max> <period>`. */
  cpuMax?: string;
  /** cgroup v1 `cpu.cfs_quota_us` (-1: no quota) and `cpu.cfs_period_us`. */
  cfsQuotaUs?: string;
  cfsPeriodUs?: string;
}

/**
 * CPUs the process may use: the cgroup's quota (v2 `cpu.max`, else v1 CFS quota over period)
 * when one is set, never more than the CPUs it may run on (`parallelism`, which follows the
 * affinity mask). A Kubernetes limit of `1500m` gives 1.5. @internal
 */
export function cpuQuotaFrom(files: CgroupCpuFiles, parallelism: number): number {
  let quota = Infinity;
  const v2 = files.cpuMax?.trim().split(/\s+/);
  if (v2 && v2[0] !== 'max' && v2.length === 2) {
    const q = Number(v2[0]);
    const p = Number(v2[1]);
    if (q > 0 && p > 0) quota = q / p;
  } else if (files.cfsQuotaUs !== undefined && files.cfsPeriodUs !== undefined) {
    const q = Number(files.cfsQuotaUs.trim());
    const p = Number(files.cfsPeriodUs.trim());
    if (q > 0 && p > 0) quota = q / p;
  }
  return Math.max(0.01, Math.min(quota, parallelism));
}

/** {@link cpuQuotaFrom} with this process's cgroup files and CPUs. */
export function readCpuQuota(): number {
  const read = (file: string): string | undefined => {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return undefined;
    }
  };
  const files: CgroupCpuFiles = {};
  const cpuMax = read('/sys/fs/cgroup/cpu.max');
  if (cpuMax !== undefined) files.cpuMax = cpuMax;
  for (const dir of ['/sys/fs/cgroup/cpu', '/sys/fs/cgroup/cpu,cpuacct']) {
    const quota = read(`${dir}/cpu.cfs_quota_us`);
    const period = read(`${dir}/cpu.cfs_period_us`);
    if (quota !== undefined && period !== undefined) {
      files.cfsQuotaUs = quota;
      files.cfsPeriodUs = period;
      break;
    }
  }
  return cpuQuotaFrom(files, os.availableParallelism());
}

/**
 * Transforms a process runs at once by default: one per CPU of its quota, rounded up (a
 * transform keeps one thread busy; more would only queue inside libvips). @internal
 */
export function defaultTransformSlots(quota: number): number {
  return Math.max(1, Math.ceil(quota - 1e-9));
}

/**
 * The libuv thread pool size that lets `slots` transforms run at once and leaves two threads
 * for the rest of the pool's work (file system, DNS lookups), never below libuv's default 4.
 * @internal
 */
export function threadPoolSizeFor(slots: number): number {
  return Math.min(1024, Math.max(4, slots + 2));
}

/**
 * This process's share of the CPU quota: the whole quota, or an equal part of it in one of
 * `workers` processes sharing it (`serve --workers N`), so N workers together size their
 * transform slots and thread pools to the machine, not N times.
 */
export function readWorkerCpuQuota(workers: number): number {
  return readCpuQuota() / (Number.isInteger(workers) && workers > 1 ? workers : 1);
}
