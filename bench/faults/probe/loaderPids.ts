import { readdirSync, readFileSync } from 'node:fs';

/**
 * A loader's processes: `pid` and its descendants, from `/proc/<pid>/task/<tid>/children`.
 * With `serve --workers N` the primary holds the port and the N workers are its children, so
 * memory and file descriptors are counted over all of them. Only `pid` when `/proc` is missing.
 *
 * @internal
 */
export function loaderPids(pid: number): number[] {
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
