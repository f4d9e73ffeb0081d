import { spawn, type ChildProcess } from 'node:child_process';
import { packageRoot } from './scripts.js';

/** Where and how to start a benchmark process. @internal */
export interface SpawnPinnedOptions {
  /** CPU list to run on (`taskset -c`); absent: wherever the OS schedules it. */
  cpus?: string;
  /** Extra environment on top of this process's. */
  env?: NodeJS.ProcessEnv;
  /** Called with every pid started, so the caller can account for (and reap) them all. */
  onSpawn?: (pid: number) => void;
  /** Executable to run instead of node (e.g. a Python interpreter); the args are then its own. */
  executable?: string;
}

/**
 * Starts `node <args>` in the package root, under `taskset -c <cpus>` when asked (taskset
 * execs node, so the pid is node's own and its CPU times are the process's), with stdin,
 * stdout and stderr piped. @internal
 */
export function spawnPinned(nodeArgs: string[], options: SpawnPinnedOptions = {}): ChildProcess {
  const executable = options.executable ?? process.execPath;
  const [command, args] =
    options.cpus === undefined
      ? [executable, nodeArgs]
      : ['taskset', ['-c', options.cpus, executable, ...nodeArgs]];
  const child = spawn(command, args, {
    cwd: packageRoot,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  if (child.pid !== undefined) options.onSpawn?.(child.pid);
  return child;
}

/**
 * Ends a child started by {@link spawnPinned}: after `patienceMs` for it to exit by itself,
 * SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. @internal
 */
export async function endChild(
  child: ChildProcess,
  graceMs = 20_000,
  patienceMs = 0,
): Promise<void> {
  const gone = (): boolean => child.exitCode !== null || child.signalCode !== null;
  if (gone()) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timers: NodeJS.Timeout[] = [];
  const later = (ms: number, fn: () => void): void => void timers.push(setTimeout(fn, ms));
  later(patienceMs, () => child.kill('SIGTERM'));
  later(patienceMs + graceMs, () => child.kill('SIGKILL'));
  try {
    await exited;
  } finally {
    for (const t of timers) clearTimeout(t);
  }
}

/** The last `max` characters a stream produced, for error messages. @internal */
export function tail(stream: NodeJS.ReadableStream | null, max = 4000): () => string {
  let text = '';
  stream?.on('data', (d: Buffer | string) => {
    text = (text + d.toString()).slice(-max);
  });
  return () => text;
}
