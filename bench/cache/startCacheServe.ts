import type { DbConfig } from '../../src/core/index.js';
import { serveChildEnv, waitUntilReady } from '../../src/cli/index.js';
import { cliMainArgs } from '../../test/support/index.js';
import { endChild, spawnPinned, tail } from '../../test/support/index.js';

/** The sample cache a loader of `bench cache` runs with. @internal */
export interface CacheTiers {
  /** `--cache-memory-bytes` (0: no memory tier). */
  memoryBytes: number;
  /** `--cache-dir`: the disk tier's folder (absent: no disk tier). */
  dir?: string;
  /** `--cache-disk-bytes`. */
  diskBytes?: number;
}

/** A `serve` child of `bench cache`. @internal */
export interface CacheServe {
  pid: number;
  /** `127.0.0.1:<port>` of its gRPC server. */
  address: string;
  /** `127.0.0.1:<port>` of its `/metrics`. */
  metricsAddress: string;
  /** Its `stream_end` log records, in order. */
  streamEnds: Record<string, unknown>[];
  /** Its warnings and errors (a disk tier that failed, for one), as log messages. */
  warnings: string[];
  /** Resolves once it logged `sample cache on` (rejects after `timeoutMs`). */
  cacheOn(timeoutMs?: number): Promise<Record<string, unknown>>;
  /** SIGTERM (graceful shutdown: the disk tier commits and closes), SIGKILL after a while. */
  stop(): Promise<void>;
}

/**
 * Runs the real `serve` (one process) on 127.0.0.1 with free ports and the sample cache of
 * `cache` (undefined: none, whatever this process's environment says), and resolves once it
 * serves. Unlike `bench stream`'s `startServeProcess` it keeps the metrics port: this
 * benchmark counts database reads and cache hits from `/metrics` between epochs.
 */
export async function startCacheServe(options: {
  db: DbConfig;
  cache: CacheTiers | undefined;
  onSpawn: (pid: number) => void;
}): Promise<CacheServe> {
  const { cache } = options;
  const childEnv = serveChildEnv(options.db);
  const child = spawnPinned([...cliMainArgs(), 'serve', '--host', '127.0.0.1'], {
    onSpawn: options.onSpawn,
    env: {
      ...childEnv,
      SCYLLA_LOADER_WORKERS: '1',
      SCYLLA_LOADER_CACHE_MEMORY_BYTES: String(cache?.memoryBytes ?? 0),
      // An empty variable unsets the folder: no disk tier.
      SCYLLA_LOADER_CACHE_DIR: cache?.dir ?? '',
      ...(cache?.dir !== undefined && cache.diskBytes !== undefined
        ? { SCYLLA_LOADER_CACHE_DISK_BYTES: String(cache.diskBytes) }
        : {}),
    },
  });
  const stderr = tail(child.stderr, 16_000);
  const stdout = tail(child.stdout, 16_000);
  const output = (): string => `${stderr()}\n${stdout()}`;
  const streamEnds: Record<string, unknown>[] = [];
  const warnings: string[] = [];
  let cacheRecord: Record<string, unknown> | undefined;
  const { port, metricsPort } = await waitUntilReady(child, {
    timeoutMs: 60_000,
    output,
    readyFile: childEnv.SCYLLA_LOADER_READY_FILE,
    onRecord: (record) => {
      if (record['event'] === 'stream_end') streamEnds.push(record);
      if (record['msg'] === 'sample cache on') cacheRecord = record;
      // pino levels: 40 warn, 50 error, 60 fatal.
      if (typeof record['level'] === 'number' && record['level'] >= 40) {
        warnings.push(String(record['msg']));
      }
    },
  }).catch(async (err: unknown) => {
    await endChild(child, 5_000);
    throw err;
  });
  return {
    pid: child.pid ?? -1,
    address: `127.0.0.1:${port}`,
    metricsAddress: `127.0.0.1:${metricsPort}`,
    streamEnds,
    warnings,
    cacheOn: async (timeoutMs = 5_000) => {
      const deadline = Date.now() + timeoutMs;
      while (cacheRecord === undefined) {
        if (Date.now() > deadline) {
          throw new Error(`the loader did not log 'sample cache on':\n${output()}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      return cacheRecord;
    },
    stop: () => endChild(child),
  };
}
