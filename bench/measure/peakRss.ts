import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Resets a process's peak resident set size (`VmHWM`) to its current one by writing 5 to
 * `/proc/<pid>/clear_refs` (Linux 4.0+), so the next {@link peakRssBytes} is the peak of what
 * ran since. Returns false where that is not possible: the peak then spans the process's life.
 *
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

/**
 * Peak resident set size of a process (`VmHWM` of `/proc/<pid>/status`), in bytes; undefined
 * when the process is gone or there is no `/proc`.
 *
 * @internal
 */
export function peakRssBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
