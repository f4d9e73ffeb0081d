import { readFileSync } from 'node:fs';

/**
 * Current resident set size of a process (`VmRSS` of `/proc/<pid>/status`), in bytes;
 * undefined when the process is gone or there is no `/proc` (see `peakRssBytes` for the peak).
 *
 * @internal
 */
export function rssBytes(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
