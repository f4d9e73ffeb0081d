import { readdirSync, readFileSync } from 'node:fs';
import { procStat } from '../measure/procfs.js';

/**
 * The pids of the live node:cluster workers forked by `pid` (a `serve --workers N` primary):
 * its children whose environment holds `NODE_UNIQUE_ID`, which node:cluster sets in every
 * worker (other children, such as a TypeScript loader's build service, have none). Empty
 * where `/proc` cannot be read.
 *
 * @internal
 */
export function clusterWorkerPids(pid: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const workers: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (!stat || stat.ppid !== pid || stat.state === 'Z') continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    if (environ.split('\0').some((v) => v.startsWith('NODE_UNIQUE_ID='))) {
      workers.push(Number(entry));
    }
  }
  return workers;
}
