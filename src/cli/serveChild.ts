import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { DbConfig } from '../core/index.js';

/**
 * The environment that configures a `serve` child for one machine: 127.0.0.1, free gRPC and
 * metrics ports, a fresh resume key, info logs, and the database of `db`. Used by the demo and
 * the benchmarks, which both run the loader as users do, in a process of its own.
 */
export function serveChildEnv(db: DbConfig): NodeJS.ProcessEnv {
  return {
    SCYLLA_LOADER_HOST: '127.0.0.1',
    SCYLLA_LOADER_GRPC_PORT: '0',
    SCYLLA_LOADER_METRICS_PORT: '0',
    SCYLLA_LOADER_RESUME_KEY: randomBytes(32).toString('hex'),
    SCYLLA_LOADER_LOG_LEVEL: 'info',
    SCYLLA_LOADER_CONTACT_POINTS: db.contactPoints.join(','),
    SCYLLA_LOADER_CQL_PORT: String(db.port),
    SCYLLA_LOADER_LOCAL_DC: db.localDataCenter,
    SCYLLA_LOADER_CONNECTIONS_PER_HOST: String(db.connectionsPerHost),
  };
}

/** How {@link waitUntilServing} watches a `serve` child. */
export interface WaitUntilServingOptions {
  timeoutMs: number;
  /** Every JSON log record the child writes, before and after it serves. */
  onRecord?: (record: Record<string, unknown>) => void;
  /** The end of the child's output, for the error when it exits before serving. */
  output: () => string;
}

/**
 * Resolves with the gRPC port of a `serve` child once its `loader serving` log line names it.
 * Keeps reading its JSON log lines afterwards (for `onRecord`). Rejects when the child exits
 * first (with the end of its output) or takes longer than `timeoutMs`; the caller ends it.
 */
export function waitUntilServing(
  child: ChildProcess,
  options: WaitUntilServingOptions,
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new Error(`the loader process (serve) did not start in ${options.timeoutMs} ms`)),
      options.timeoutMs,
    );
    let buffered = '';
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
        }
        options.onRecord?.(record);
      }
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new Error(
          `the loader process (serve) exited (${signal ?? `code ${code}`}) before serving:\n` +
            options.output(),
        ),
      );
    });
  });
}
