import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticks: number | undefined;

/**
 * Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, 100 on Linux almost
 * everywhere, which is the fallback).
 *
 * @internal
 */
export function clockTicksPerSecond(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}

/**
 * CPU seconds (user + system, all threads) a process has used so far, from `/proc/<pid>/stat`;
 * undefined when the process is gone or there is no `/proc`.
 *
 * @internal
 */
export function processCpuSeconds(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (in parentheses, may hold spaces): state is field 3, utime
  // field 14 and stime field 15 (proc(5)).
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return (utime + stime) / clockTicksPerSecond();
}

/**
 * Samples the CPU seconds of several processes at once, and returns a function that gives each
 * one's seconds used since then (undefined for a process without a pid or gone).
 *
 * @internal
 */
export function cpuMeter(
  pids: Readonly<Record<string, number | undefined>>,
): () => Record<string, number | undefined> {
  const start = Object.fromEntries(
    Object.entries(pids).map(([k, pid]) => [
      k,
      pid === undefined ? undefined : processCpuSeconds(pid),
    ]),
  );
  return () =>
    Object.fromEntries(
      Object.entries(pids).map(([k, pid]) => {
        const before = start[k];
        const now = pid === undefined ? undefined : processCpuSeconds(pid);
        return [k, before === undefined || now === undefined ? undefined : now - before];
      }),
    );
}
