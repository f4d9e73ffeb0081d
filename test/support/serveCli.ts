import type { ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import { testDbConfig } from './dbHelpers.js';
import { dbEnv } from './dbEnv.js';
import { newReadyFile, waitForReadyFile } from './readyFile.js';
import { collect, spawnCli, type CliResult } from './runCli.js';

/** The `serve` command line of a test's loader process: gRPC and /metrics on free ports of 127.0.0.1. */
export const SERVE_ON_FREE_PORTS: readonly string[] = [
  'serve',
  '--host',
  '127.0.0.1',
  '--grpc-port',
  '0',
  '--metrics-port',
  '0',
];

/** A `serve` child whose JSON log lines are kept as they arrive. */
export interface ServedLoader {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  done: Promise<CliResult>;
  port: number;
  metricsPort: number;
}

/**
 * Starts `serve --workers <workers>` against the test database (no resume key: the cluster
 * must draw one for all), with `args` and `env` added, and waits for its ready file.
 */
export async function startServeCli(
  workers: number,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<ServedLoader> {
  const db = testDbConfig();
  const readyFile = newReadyFile();
  const child = spawnCli([...SERVE_ON_FREE_PORTS, ...args], {
    SCYLLA_LOADER_READY_FILE: readyFile,
    ...dbEnv(db),
    SCYLLA_LOADER_RESUME_KEY: '',
    SCYLLA_LOADER_WORKERS: String(workers),
    SCYLLA_LOADER_LOG_LEVEL: 'info',
    ...env,
  });
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout!.on('data', (d: Buffer) => {
    const text = partial + d.toString();
    const parts = text.split('\n');
    partial = parts.pop()!;
    for (const p of parts) if (p.trim()) lines.push(JSON.parse(p) as Record<string, unknown>);
  });
  const done = collect(child);
  const ready = await waitForReadyFile(child, readyFile);
  expect(ready.workers).toBe(workers);
  return { child, lines, done, port: ready.port, metricsPort: ready.metricsPort };
}

/** The pids that logged `msg`. */
export const pidsOf = (loader: ServedLoader, msg: string): Set<number> =>
  new Set(loader.lines.filter((l) => l['msg'] === msg).map((l) => l['pid'] as number));

/** The loader's /metrics text. */
export async function scrape(loader: ServedLoader): Promise<string> {
  return (await fetch(`http://127.0.0.1:${loader.metricsPort}/metrics`)).text();
}

/** The value of one series (name with its labels) in a /metrics text; NaN when absent. */
export function metric(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}
