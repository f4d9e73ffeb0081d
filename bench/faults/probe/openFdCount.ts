import { readdirSync } from 'node:fs';

/**
 * Open file descriptors of a process (entries of `/proc/<pid>/fd`): sockets, files, pipes,
 * epoll and timer fds. Undefined when the process is gone or there is no `/proc`.
 *
 * @internal
 */
export function openFdCount(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}
