import type { Placement } from './StreamBenchOptions.js';
import { getAffinity, hasTaskset, parseCpuList, setAffinity } from './affinity.js';

/** CPUs of the pinned placement. @internal */
export interface Pinning {
  database: string;
  loaderAndClient: string;
}

/**
 * Why the pinned placement (the database node on one core, loader and clients on another)
 * cannot run here, or the CPUs it uses: the first two this process may run on. @internal
 */
export async function pinnedSkipReason(
  dbPid: number | undefined,
): Promise<{ reason?: string; pinning?: Pinning }> {
  if (dbPid === undefined) {
    return { reason: 'the database is not the local node, so its process cannot be pinned' };
  }
  if (!(await hasTaskset())) {
    return { reason: 'taskset (util-linux) is not installed' };
  }
  const cpus = parseCpuList(await getAffinity(process.pid));
  if (cpus.length < 2) {
    return { reason: `this process may use ${cpus.length} CPU only; pinning needs two` };
  }
  return { pinning: { database: String(cpus[0]), loaderAndClient: String(cpus[1]) } };
}

/**
 * Pins every thread of a process (the database node, toxiproxy) to `cpus`; returns what
 * restores its former affinity. @internal
 */
export async function pinProcess(pid: number, cpus: string): Promise<() => Promise<void>> {
  const original = await getAffinity(pid);
  await setAffinity(pid, cpus);
  return () => setAffinity(pid, original);
}

/**
 * The placements of `wanted` that can run here (pinned needs the local node, taskset and two
 * CPUs), the CPUs of the pinned one, and a note for each one skipped. Unpinned is always kept
 * or, when nothing else is left, added. @internal
 */
export async function resolvePlacements(
  wanted: readonly Placement[],
  dbPid: number | undefined,
  log: (line: string) => void = () => undefined,
): Promise<{ placements: Placement[]; pinning?: Pinning; notes: string[] }> {
  const placements: Placement[] = [];
  const notes: string[] = [];
  let pinning: Pinning | undefined;
  for (const placement of wanted) {
    if (placement === 'unpinned') {
      placements.push(placement);
      continue;
    }
    const skip = await pinnedSkipReason(dbPid);
    if (skip.pinning) {
      pinning = skip.pinning;
      placements.push(placement);
    } else {
      notes.push(`pinned placement skipped: ${skip.reason}`);
      log(`pinned placement skipped: ${skip.reason}`);
    }
  }
  if (placements.length === 0) placements.push('unpinned');
  return { placements, ...(pinning ? { pinning } : {}), notes };
}
