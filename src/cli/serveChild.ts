import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { DbConfig } from '../core/index.js';
import { type ReadyInfo, readReadyFile } from './readyFile.js';

/**
 * The environment that configures a `serve` child for one machine: 127.0.0.1, free gRPC and
 * metrics ports, a fresh resume key, info logs, and the database of `db`. Used by the demo and
 * the benchmarks, which both run the loader as users do, in a process of its own.
 */
export function serveChildEnv(
  db: DbConfig,
): NodeJS.ProcessEnv & { SCYLLA_LOADER_READY_FILE: string } {
  return {
    SCYLLA_LOADER_READY_FILE: path.join(
      os.tmpdir(),
      `scylla-loader-ready-${randomBytes(8).toString('hex')}.json`,
    ),
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
  /** The child's `SCYLLA_LOADER_READY_FILE` (see {@link serveChildEnv}). */
  readyFile: string;
}

/**
 * Resolves with what a `serve` child bound once it writes its ready file (`--ready-file`).
 * Passes its JSON log lines to `onRecord` meanwhile and afterwards. Rejects when the child
 * exits first (with the end of its output) or takes longer than `timeoutMs`; the caller ends
 * it.
 */
export function waitUntilReady(
  child: ChildProcess,
  options: WaitUntilServingOptions,
): Promise<ReadyInfo> {
  return new Promise<ReadyInfo>((resolve, reject) => {
    const done = (): void => {
      clearTimeout(timer);
      clearInterval(poll);
    };
    const timer = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`the loader process (serve) did not start in ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const poll = setInterval(() => {
      try {
        const ready = readReadyFile(options.readyFile);
        if (ready === undefined) return;
        done();
        resolve(ready);
      } catch (err) {
        done();
        reject(err as Error);
      }
    }, 25);
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
        options.onRecord?.(record);
      }
    });
    child.once('error', (err) => {
      done();
      reject(err);
    });
    child.once('exit', (code, signal) => {
      done();
      reject(
        new Error(
          `the loader process (serve) exited (${signal ?? `code ${code}`}) before serving:\n` +
            options.output(),
        ),
      );
    });
  });
}

/** The gRPC port of a `serve` child once it is ready (see {@link waitUntilReady}). */
export async function waitUntilServing(
  child: ChildProcess,
  options: WaitUntilServingOptions,
): Promise<number> {
  return (await waitUntilReady(child, options)).port;
}
