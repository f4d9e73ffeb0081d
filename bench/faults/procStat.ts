import { readFileSync } from 'node:fs';

/**
 * State letter (`R`, `S`, `Z`, ...) and parent pid of `pid` from `/proc/<pid>/stat`, or
 * undefined when there is no such process (or no `/proc`).
 *
 * @internal
 */
export function procStat(pid: number): { state: string; ppid: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name in parentheses may hold spaces and ')': the fields start after the last.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', ppid: Number(fields[1]) };
}
