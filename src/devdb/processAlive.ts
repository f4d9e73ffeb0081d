import { existsSync, readFileSync } from 'node:fs';

/**
 * Whether `pid` names a running process. A zombie (exited, not yet reaped by its parent) counts
 * as dead: `kill(pid, 0)` alone would report it alive, and a node we spawned ourselves stays a
 * zombie for a moment after it exits.
 *
 * @internal
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The state letter follows the command name, which is in parentheses and may hold spaces.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    // Without /proc (macOS) trust kill(); with it, the process vanished in between.
    return !existsSync('/proc/self/stat');
  }
}
