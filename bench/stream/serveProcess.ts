import { randomBytes } from 'node:crypto';
import { LoaderClient } from '../../src/client/LoaderClient.js';
import type { DbConfig } from '../../src/core/index.js';
import { cliMainArgs } from './benchScripts.js';
import { endChild, spawnPinned, tail, type SpawnPinnedOptions } from './spawnPinned.js';

/** A `scylla-loader serve` child process. @internal */
export interface ServeProcess {
  pid: number;
  /** `127.0.0.1:<port>` of its gRPC server. */
  address: string;
  /** The `stream end` log records of the streams it served, in order. */
  streamEnds: Record<string, unknown>[];
  /** SIGTERM (graceful shutdown), SIGKILL if it is still there after a while. */
  stop(): Promise<void>;
}

/** How to start {@link startServeProcess}. @internal */
export interface ServeProcessOptions extends SpawnPinnedOptions {
  db: DbConfig;
  /** Node flags before the script, e.g. `--cpu-prof`. */
  nodeFlags?: string[];
  startTimeoutMs?: number;
}

/**
 * Runs the real `serve` command (`node --import tsx src/cli/main.ts serve`) configured through
 * its environment variables, on 127.0.0.1 with free gRPC and metrics ports, and resolves once
 * its log says it serves.
 *
 * @internal
 */
export async function startServeProcess(options: ServeProcessOptions): Promise<ServeProcess> {
  const { db } = options;
  const child = spawnPinned([...(options.nodeFlags ?? []), ...cliMainArgs(), 'serve'], {
    ...options,
    env: {
      SCYLLA_LOADER_HOST: '127.0.0.1',
      SCYLLA_LOADER_GRPC_PORT: '0',
      SCYLLA_LOADER_METRICS_PORT: '0',
      SCYLLA_LOADER_RESUME_KEY: randomBytes(32).toString('hex'),
      SCYLLA_LOADER_LOG_LEVEL: 'info',
      SCYLLA_LOADER_CONTACT_POINTS: db.contactPoints.join(','),
      SCYLLA_LOADER_CQL_PORT: String(db.port),
      SCYLLA_LOADER_LOCAL_DC: db.localDataCenter,
      SCYLLA_LOADER_CONNECTIONS_PER_HOST: String(db.connectionsPerHost),
      ...options.env,
    },
  });
  const stderr = tail(child.stderr);
  const stdout = tail(child.stdout);
  const streamEnds: Record<string, unknown>[] = [];
  let buffered = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`serve did not start in ${options.startTimeoutMs ?? 60_000} ms`));
    }, options.startTimeoutMs ?? 60_000);
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        if (record['msg'] === 'loader serving') {
          clearTimeout(timer);
          resolve(Number(record['port']));
        } else if (record['event'] === 'stream_end') {
          streamEnds.push(record);
        }
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `serve exited (${signal ?? `code ${code}`}) before serving\n${stderr()}\n${stdout()}`,
        ),
      );
    });
  }).catch(async (err: unknown) => {
    await endChild(child, 5_000);
    throw err;
  });
  return {
    pid: child.pid ?? -1,
    address: `127.0.0.1:${port}`,
    streamEnds,
    stop: () => endChild(child),
  };
}

/**
 * Streams one untimed epoch of split `all` through a fresh loader, so the measured runs find it
 * warmed up (JIT, heap sizes, the split's ids and a permutation cached).
 *
 * @internal
 */
export async function warmUpLoader(
  serve: Pick<ServeProcess, 'address'>,
  options: { dataset: string; batchSize: number; signal?: AbortSignal | undefined },
): Promise<void> {
  const client = new LoaderClient(serve.address);
  try {
    for await (const batch of client.streamBatches(
      { dataset: options.dataset, split: 'all', batchSize: options.batchSize, seed: 999_999 },
      options.signal ? { signal: options.signal } : {},
    )) {
      void batch;
    }
  } finally {
    client.close();
  }
}
