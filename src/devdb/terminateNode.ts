import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeLayout } from './nodeLayout.js';
import { liveNodePid, removePidFile } from './nodeProcess.js';
import { isProcessAlive } from './processAlive.js';

/** How {@link terminateNode} ends a node. @internal */
export interface TerminateOptions {
  /**
   * SIGTERM (default) lets Cassandra drain: memtables are flushed, so the next start replays
   * no commit log. SIGKILL is a crash, for tests of node loss.
   */
  signal?: 'SIGTERM' | 'SIGKILL';
  /** How long to wait after SIGTERM before SIGKILL. */
  graceMs?: number;
}

/**
 * Stops one node if it runs and removes its pid file either way. Returns whether a process was
 * signalled.
 *
 * @internal
 */
export async function terminateNode(
  node: NodeLayout,
  opts: TerminateOptions = {},
): Promise<boolean> {
  const pid = await liveNodePid(node);
  if (pid === undefined) {
    await removePidFile(node);
    return false;
  }
  await terminatePid(pid, opts);
  await removePidFile(node);
  return true;
}

/**
 * Signals `pid` and waits until it is gone, escalating to SIGKILL after the grace period.
 *
 * @internal
 */
export async function terminatePid(pid: number, opts: TerminateOptions = {}): Promise<void> {
  const signal = opts.signal ?? 'SIGTERM';
  signalQuietly(pid, signal);
  if (await waitForExit(pid, signal === 'SIGKILL' ? 10_000 : (opts.graceMs ?? 30_000))) return;
  signalQuietly(pid, 'SIGKILL');
  if (!(await waitForExit(pid, 10_000))) {
    throw new Error(`process ${pid} survived SIGKILL for 10 s`);
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(200);
  }
  return true;
}

function signalQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone: that is what we wanted.
  }
}
