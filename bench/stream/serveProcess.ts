import { LoaderClient, type LoaderClientOptions } from '../../src/client/index.js';
import type { DbConfig } from '../../src/core/index.js';
import { serveChildEnv, waitUntilReady } from '../../src/cli/index.js';
import { cliMainArgs } from '../../test/support/index.js';
import { endChild, spawnPinned, tail, type SpawnPinnedOptions } from '../../test/support/index.js';

/** A `scylla-loader serve` child process. @internal */
export interface ServeProcess {
  pid: number;
  /** `127.0.0.1:<port>` of its gRPC server. */
  address: string;
  /** `127.0.0.1:<port>` of its `/metrics`. */
  metricsAddress: string;
  /** The `stream end` log records of the streams it served, in order. */
  streamEnds: Record<string, unknown>[];
  /** Pids of its worker processes (`serve --workers N`, N > 1); empty for one process. */
  workerPids: number[];
  /** Its warnings and errors (a disk tier that failed, for one), as log messages. */
  warnings: string[];
  /** The end of its stderr and stdout. */
  output(): string;
  /** SIGTERM (graceful shutdown), SIGKILL if it is still there after a while. */
  stop(): Promise<void>;
}

/** How to start {@link startServeProcess}. @internal */
export interface ServeProcessOptions extends SpawnPinnedOptions {
  db: DbConfig;
  /** Node flags before the script, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  startTimeoutMs?: number;
  /** Sees every JSON log record besides those the process keeps. */
  onRecord?: (record: Record<string, unknown>) => void;
}

/**
 * Runs the real `serve` command (`node --import tsx src/cli/main.ts serve`) configured through
 * its environment variables, on 127.0.0.1 with free gRPC and metrics ports, and resolves once
 * its ready file says it serves. @internal
 */
export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  // One process unless told otherwise: the benchmarks measure a loader process's CPU and RSS
  // by its pid (`bench cores` sets the number and adds up the workers). No sample cache unless
  // told (`bench cache`): `serve` sizes one by default, and a benchmark of the database path
  // would measure its warm epochs instead.
  const childEnv = serveChildEnv(options.db);
  const child = spawnPinned(
    [...(options.nodeFlags ?? []), ...cliMainArgs(), 'serve', '--host', '127.0.0.1'],
    {
      ...options,
      env: {
        ...childEnv,
        SCYLLA_LOADER_WORKERS: '1',
        SCYLLA_LOADER_CACHE_MEMORY_BYTES: '0',
        ...options.env,
      },
    },
  );
  const stderr = tail(child.stderr, 16_000);
  const stdout = tail(child.stdout, 16_000);
  const output = (): string => `${stderr()}\n${stdout()}`;
  const streamEnds: Record<string, unknown>[] = [];
  const workerPids: number[] = [];
  const warnings: string[] = [];
  const { port, metricsPort } = await waitUntilReady(child, {
    timeoutMs: options.startTimeoutMs ?? 60_000,
    output,
    readyFile: childEnv.SCYLLA_LOADER_READY_FILE,
    onRecord: (record) => {
      if (record['event'] === 'stream_end') streamEnds.push(record);
      if (record['msg'] === 'worker serving') workerPids.push(record['pid'] as number);
      // pino levels: 40 warn, 50 error, 60 fatal.
      if (typeof record['level'] === 'number' && record['level'] >= 40) {
        warnings.push(String(record['msg']));
      }
      options.onRecord?.(record);
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
    workerPids,
    warnings,
    output,
    stop: () => endChild(child),
  };
}

/**
 * Streams one untimed epoch of split `all` through a fresh loader, so the measured runs find it
 * warmed up (JIT, heap sizes, the split's ids and a permutation cached). Returns the samples
 * it received. @internal
 */
export async function warmUpLoader(
  serve: Pick<ServeProcess, 'address'>,
  options: {
    dataset: string;
    batchSize: number;
    signal?: AbortSignal | undefined;
    /** How to reach a loader with TLS or tokens (default: plain text). */
    client?: LoaderClientOptions;
    /** A job to name, so the loader records the epoch in its training ledger. */
    jobId?: string;
  },
): Promise<number> {
  const client = new LoaderClient(serve.address, options.client ?? {});
  let samples = 0;
  try {
    for await (const batch of client.streamBatches(
      {
        dataset: options.dataset,
        split: 'all',
        batchSize: options.batchSize,
        seed: 999_999,
        ...(options.jobId === undefined ? {} : { jobId: options.jobId }),
      },
      options.signal ? { signal: options.signal } : {},
    )) {
      samples += batch.samples.length;
    }
  } finally {
    client.close();
  }
  return samples;
}
