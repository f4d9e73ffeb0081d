import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

let ticks: number | undefined;

/**
 * Clock ticks per second of `/proc/<pid>/stat` times (`getconf CLK_TCK`, 100 on Linux almost
 * everywhere, which is the fallback). @internal
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
 * The fields of `/proc/<pid>/stat` after the command name, from the state (field 3) on; the
 * name in parentheses may hold spaces and ')', so they start after the last. Undefined when
 * the process is gone or there is no `/proc`.
 */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** A `kB` line of `/proc/<pid>/status` in bytes, or undefined (process gone, no `/proc`). */
function statusBytes(pid: number, key: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * State letter (`R`, `S`, `Z`, ...) and parent pid of `pid`, or undefined when there is no
 * such process (or no `/proc`). @internal
 */
export function procStat(pid: number): { state: string; ppid: number } | undefined {
  const fields = statFields(pid);
  return fields && { state: fields[0] ?? '', ppid: Number(fields[1]) };
}

/**
 * CPU seconds (user + system, all threads) a process has used so far (utime and stime,
 * fields 14 and 15 of proc(5)); undefined when the process is gone or there is no `/proc`.
 * @internal
 */
export function processCpuSeconds(pid: number): number | undefined {
  const fields = statFields(pid);
  const utime = Number(fields?.[11]);
  const stime = Number(fields?.[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return (utime + stime) / clockTicksPerSecond();
}

/** The CPU seconds of several processes together; undefined when one is gone. @internal */
export function totalCpuSeconds(pids: readonly number[]): number | undefined {
  let sum = 0;
  for (const pid of pids) {
    const s = processCpuSeconds(pid);
    if (s === undefined) return undefined;
    sum += s;
  }
  return sum;
}

/**
 * Samples the CPU seconds of several processes at once, and returns a function that gives each
 * one's seconds used since then (undefined for a process without a pid or gone). @internal
 */
export function cpuMeter(
  pids: Readonly<Record<string, number | undefined>>,
): () => Record<string, number | undefined> {
  const read = (pid: number | undefined): number | undefined =>
    pid === undefined ? undefined : processCpuSeconds(pid);
  const start = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, read(pid)]));
  return () =>
    Object.fromEntries(
      Object.entries(pids).map(([k, pid]) => {
        const before = start[k];
        const now = read(pid);
        return [k, before === undefined || now === undefined ? undefined : now - before];
      }),
    );
}

/**
 * Current resident set size of a process (`VmRSS`), in bytes; undefined when the process is
 * gone or there is no `/proc` (see {@link peakRssBytes} for the peak). @internal
 */
export function rssBytes(pid: number): number | undefined {
  return statusBytes(pid, 'VmRSS');
}

/**
 * Peak resident set size of a process (`VmHWM`), in bytes; undefined when the process is
 * gone or there is no `/proc`. @internal
 */
export function peakRssBytes(pid: number): number | undefined {
  return statusBytes(pid, 'VmHWM');
}

/**
 * Resets a process's peak resident set size (`VmHWM`) to its current one by writing 5 to
 * `/proc/<pid>/clear_refs` (Linux 4.0+), so the next {@link peakRssBytes} is the peak of what
 * ran since. Returns false where that is not possible: the peak then spans the process's life.
 * @internal
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}
