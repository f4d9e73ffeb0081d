import { rssBytes } from '../../measure/procfs.js';
import { loaderPids } from './loaderPids.js';
import { openFdCount } from './openFdCount.js';

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
