import { readdirSync, readFileSync } from 'node:fs';
import { rssBytes } from '../../support/index.js';

/**
 * A loader's processes: `pid` and its descendants, from `/proc/<pid>/task/<tid>/children`.
 * With `serve --workers N` the primary holds the port and the N workers are its children, so
 * memory and file descriptors are counted over all of them. Only `pid` when `/proc` is missing.
 */
function loaderPids(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number): void => {
    out.push(p);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const c of children.trim().split(/\s+/)) if (c !== '') visit(Number(c));
    }
  };
  visit(pid);
  return out;
}

/**
 * Open file descriptors of a process (entries of `/proc/<pid>/fd`): sockets, files, pipes,
 * epoll and timer fds. Undefined when the process is gone or there is no `/proc`.
 */
function openFdCount(pid: number): number | undefined {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return undefined;
  }
}

/** RSS and open file descriptors summed over a loader's processes at one instant. @internal */
export interface TreeUsage {
  /** How many processes were counted (primary and workers). */
  processes: number;
  rssBytes: number;
  fds: number;
}

/**
 * Sums RSS (`VmRSS`) and open file descriptors over `pid` and its descendants (a `serve
 * --workers N` primary and its workers): the loader's footprint as the host sees it.
 *
 * @internal
 */
export function treeUsage(pid: number): TreeUsage {
  let rss = 0;
  let fds = 0;
  let processes = 0;
  for (const p of loaderPids(pid)) {
    const r = rssBytes(p);
    if (r === undefined) continue;
    processes++;
    rss += r;
    fds += openFdCount(p) ?? 0;
  }
  return { processes, rssBytes: rss, fds };
}

/** Bytes as whole MiB, for the reports. @internal */
export const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(0);
