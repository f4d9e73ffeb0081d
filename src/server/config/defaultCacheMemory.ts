import os from 'node:os';

/** The memory a loader may use, as this machine tells it. */
export interface MemoryFacts {
  /** The host's memory (`os.totalmem()`). */
  hostBytes: number;
  /** The container's (cgroup's) memory limit, when there is one below the host's memory. */
  limitBytes?: number;
}

/** How big each loader process's memory tier is when `--cache-memory-bytes` is not set. */
export interface CacheMemoryDefault {
  /** Bytes of the memory tier of each process (0: none). */
  bytes: number;
  /** How they were derived, in words, for the start log. */
  derivation: string;
}

const MiB = 1024 * 1024;
/** A worker's own memory before any stream or cache (docs/deploy.md measures about 130 MiB). */
export const WORKER_BASE_BYTES = 160 * MiB;
/** The primary of `serve --workers N` (about 60 MiB). */
export const PRIMARY_BYTES = 64 * MiB;
/** Without a container limit the loader shares the host (a trainer, a database): an eighth. */
export const HOST_SHARE = 1 / 8;
/** Under a container limit, a quarter of each worker's share, if its other bounds leave it. */
export const LIMIT_SHARE = 1 / 4;

/** {@link MemoryFacts} of this process: Node's view of the cgroup limit, and the host's memory. */
export function readMemoryFacts(): MemoryFacts {
  const hostBytes = os.totalmem();
  // Node reports the cgroup's memory.max (v2) or memory.limit_in_bytes (v1); without a limit
  // it reports 0 or a huge number (2^64 here), which is no limit.
  const limit = process.constrainedMemory();
  return limit > 0 && limit < hostBytes ? { hostBytes, limitBytes: limit } : { hostBytes };
}

/**
 * The memory tier `serve` gives each of its `workers` processes unless told a size:
 * - under a container limit L, each worker's share is (L - the primary's) / workers, and its
 *   tier is a quarter of that share, or less: what is left of the share after the worker's
 *   base, its held-bytes budget and its id cache (which are bounds the worker may reach), so a
 *   default never takes the container past its limit; possibly 0;
 * - without one, an eighth of the host's memory, split between the workers (the host is
 *   shared: a trainer, a database).
 * Rounded down to whole MiB.
 */
export function defaultCacheMemoryBytes(
  facts: MemoryFacts,
  workers: number,
  bounds: { maxHeldBytes: number; idCacheBytes: number },
): CacheMemoryDefault {
  const n = Math.max(1, workers);
  const per = n === 1 ? 'the worker' : `each of ${n} workers`;
  if (facts.limitBytes !== undefined) {
    const share = (facts.limitBytes - (n > 1 ? PRIMARY_BYTES : 0)) / n;
    const room = share - WORKER_BASE_BYTES - bounds.maxHeldBytes - bounds.idCacheBytes;
    const bytes = wholeMiB(Math.min(share * LIMIT_SHARE, room));
    return {
      bytes,
      derivation:
        `a quarter of the ${mib(share)} ${per} gets of the container's ${mib(facts.limitBytes)} ` +
        `memory limit, at most what its base (${mib(WORKER_BASE_BYTES)}), held bytes ` +
        `(${mib(bounds.maxHeldBytes)}) and id cache (${mib(bounds.idCacheBytes)}) leave: ` +
        `${mib(bytes)}`,
    };
  }
  const bytes = wholeMiB((facts.hostBytes * HOST_SHARE) / n);
  return {
    bytes,
    derivation:
      `an eighth of the host's ${mib(facts.hostBytes)} (no container memory limit)` +
      `${n === 1 ? '' : `, split between ${n} workers`}: ${mib(bytes)} ${n === 1 ? '' : 'each'}`.trimEnd(),
  };
}

function wholeMiB(bytes: number): number {
  return Math.max(0, Math.floor(bytes / MiB)) * MiB;
}

function mib(bytes: number): string {
  return `${Math.round(bytes / MiB).toLocaleString('en-US')} MiB`;
}
