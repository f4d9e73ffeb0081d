import type { DbConfig } from '../../../src/core/index.js';
import { serveChildEnv, waitUntilReady } from '../../../src/cli/index.js';
import { cliMainArgs } from '../../support/index.js';
import { endChild, spawnPinned, tail } from '../../support/index.js';

/**
 * A `serve` child started by `startProbedServe`, with what the fault benchmarks watch: its
 * pid (RSS and file descriptors from `/proc`), both ports, and whether it or one of its workers
 * exited on its own (a crash).
 *
 * @internal
 */
export interface ProbedServe {
  pid: number;
  /** `127.0.0.1:<port>` of its gRPC server. */
  address: string;
  /** `127.0.0.1:<port>` of its `/metrics` and `/healthz` server. */
  metricsAddress: string;
  /**
   * How it exited when it did so before `stop()` was called (a crash: a signal or an exit
   * code), or the first worker death its primary logged (`serve --workers N` replaces a dead
   * worker, which is a crash all the same); undefined while nothing died.
   */
  crash(): string | undefined;
  /** Workers its primary logged as dead (replaced or not). */
  workerDeaths(): number;
  /**
   * SIGTERM (graceful shutdown), SIGKILL if it is still there after a while; if it had crashed,
   * logs how with the end of its output.
   */
  stop(log: (line: string) => void): Promise<void>;
}

/**
 * Runs the real `serve` command in a process of its own, as users do, on 127.0.0.1 with free
 * gRPC and metrics ports, and resolves once its log says it serves. Unlike the stream
 * benchmark's `startServeProcess` it reads its log records, keeps the metrics port, and tells a
 * crash (an exit nobody asked for) from a stop: the fault benchmarks assert on both.
 *
 * @internal
 */
export async function startProbedServe(options: {
  db: DbConfig;
  args?: string[];
}): Promise<ProbedServe> {
  const childEnv = serveChildEnv(options.db);
  const child = spawnPinned(
    [...cliMainArgs(), 'serve', '--host', '127.0.0.1', ...(options.args ?? [])],
    {
      // Without the sample cache `serve` sizes by default: the probes measure the database path.
      env: { ...childEnv, SCYLLA_LOADER_CACHE_MEMORY_BYTES: '0' },
    },
  );
  const stderr = tail(child.stderr, 16_000);
  const stdout = tail(child.stdout, 16_000);
  const output = (): string => `${stderr()}\n${stdout()}`;
  const deaths: Record<string, unknown>[] = [];
  let serving = false;
  let stopping = false;
  let exited: string | undefined;
  child.once('exit', (code, signal) => {
    if (!stopping) exited = signal !== null ? `killed by ${signal}` : `exited with code ${code}`;
  });
  const { port, metricsPort } = await waitUntilReady(child, {
    timeoutMs: 180_000,
    output,
    readyFile: childEnv.SCYLLA_LOADER_READY_FILE,
    onRecord: (record) => {
      if (!serving) serving = record['msg'] === 'loader serving';
      else if (String(record['msg']).startsWith('loader worker died')) deaths.push(record);
    },
  }).catch(async (err: unknown) => {
    stopping = true;
    await endChild(child, 5_000);
    throw err;
  });
  const crash = (): string | undefined => {
    const died = deaths[0];
    return (
      exited ??
      (died && `worker ${String(died['worker'])} died (${String(died['signal'] ?? died['code'])})`)
    );
  };
  return {
    pid: child.pid ?? -1,
    address: `127.0.0.1:${port}`,
    metricsAddress: `127.0.0.1:${metricsPort}`,
    crash,
    workerDeaths: () => deaths.length,
    stop: async (log) => {
      const crashed = crash();
      stopping = true;
      await endChild(child, 10_000);
      if (crashed) log(`the loader crashed (${crashed}):\n${output()}`);
    },
  };
}
