import { readFileSync, realpathSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import type { NodeLayout } from './nodeLayout.js';
import { isProcessAlive } from './processAlive.js';

/**
 * The pid recorded for `node`, if its pid file names a live Cassandra of *this* node. A pid file
 * outliving its process (reboot, SIGKILL) may name a recycled pid of an unrelated program, so
 * the command line is checked for this node's folder where /proc allows.
 *
 * @internal
 */
export async function liveNodePid(node: NodeLayout): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number((await readFile(node.pidFile, 'utf8')).trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0 || !isProcessAlive(pid)) return undefined;
  return isCommandOfNode(pid, node) ? pid : undefined;
}

/**
 * Removes the pid file of a node whose process is gone, so nothing later mistakes it for live.
 *
 * @internal
 */
export async function removePidFile(node: NodeLayout): Promise<void> {
  await rm(node.pidFile, { force: true });
}

function isCommandOfNode(pid: number, node: NodeLayout): boolean {
  let cmdline: string;
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    // No /proc (macOS): the pid being alive is all we can check cheaply.
    return true;
  }
  // Arguments are NUL-separated; the storagedir flag is the one that carries the raw path. A
  // state folder reached through a symbolic link (a second checkout sharing one node) is the
  // same node, so the real path counts too.
  if (!cmdline.includes('CassandraDaemon')) return false;
  const flag = '\0-Dcassandra.storagedir=';
  const start = cmdline.indexOf(flag);
  if (start < 0) return false;
  const end = cmdline.indexOf('\0', start + flag.length);
  const storageDir = cmdline.slice(start + flag.length, end < 0 ? undefined : end);
  return sameFolder(storageDir, node.dir);
}

/** True when both paths name one folder, however reached (a symbolic link on either side). */
function sameFolder(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    // Either folder is gone: only equal paths can match.
    return false;
  }
}
