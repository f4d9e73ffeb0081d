import type { DbConfig } from '../../../src/core/index.js';
import { serveChildEnv, waitUntilReady } from '../../../src/cli/serveChild.js';
import { cliMainArgs } from '../../stream/benchScripts.js';
import { endChild, spawnPinned, tail } from '../../stream/spawnPinned.js';

/**
 * A `serve` child started by `startProbedServe`, with what the fault benchmarks watch: its
 * pid (RSS and file descriptors from `/proc`), both ports, its JSON log records and whether it
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
  /** The end of its stderr and stdout, for error messages. */
  output(): string;
  /** SIGTERM (graceful shutdown), SIGKILL if it is still there after a while. */
  stop(): Promise<void>;
}

/**
 * Runs the real `serve` command in a process of its own, as users do, on 127.0.0.1 with free
 * gRPC and metrics ports, and resolves once its log says it serves. Unlike the stream
 * benchmark's `startServeProcess` it keeps every log record and the metrics port, and tells a
 * crash (an exit nobody asked for) from a stop: the fault benchmarks assert on both.
 *
 * @internal
 */
export async function startProbedServe(options: {
  db: DbConfig;
  args?: string[];
}): Promise<ProbedServe> {
  const childEnv = serveChildEnv(options.db);
  const child = spawnPinned([...cliMainArgs(), 'serve', ...(options.args ?? [])], {
    env: childEnv,
  });
  const stderr = tail(child.stderr, 16_000);
  const stdout = tail(child.stdout, 16_000);
  const output = (): string => `${stderr()}\n${stdout()}`;
  const records: Record<string, unknown>[] = [];
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
      if (serving) records.push(record);
      else if (record['msg'] === 'loader serving') serving = true;
    },
  }).catch(async (err: unknown) => {
    stopping = true;
    await endChild(child, 5_000);
    throw err;
  });
  return {
    pid: child.pid ?? -1,
    address: `127.0.0.1:${port}`,
    metricsAddress: `127.0.0.1:${metricsPort}`,
    crash: () => {
      if (exited) return exited;
      const died = records.find((r) => String(r['msg']).startsWith('loader worker died'));
      return died
        ? `worker ${String(died['worker'])} died (${String(died['signal'] ?? died['code'])})`
        : undefined;
    },
    workerDeaths: () =>
      records.filter((r) => String(r['msg']).startsWith('loader worker died')).length,
    output,
    stop: () => {
      stopping = true;
      return endChild(child, 10_000);
    },
  };
}
