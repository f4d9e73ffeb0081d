import { readFileSync } from 'node:fs';
import {
  clockTicksPerSecond,
  processCpuSeconds,
  totalCpuSeconds,
} from '../../test/support/index.js';
import type { CpuSplit } from '../ingest/IngestBenchReport.js';

/**
 * Starts measuring CPU seconds of this process (all threads: libuv's file reads and the
 * driver's sockets included), of the database processes `dbPids`, and of the whole machine;
 * the returned function gives the split since the start. The database is null when no pid is
 * known or one of its processes is gone; the rest is null without `/proc/stat`. @internal
 */
export function startCpuWindow(
  dbPids: readonly number[],
  /** Other processes counted as the loader's: running ones by pid; ended children are in. */
  loaderPids: readonly number[] = [],
): () => CpuSplit {
  const loader0 = process.cpuUsage();
  const children0 = reapedChildrenSeconds();
  const others0 = loaderPids.map((pid) => processCpuSeconds(pid) ?? 0);
  const db0 = databaseSeconds(dbPids);
  const machine0 = machineBusySeconds();
  return () => {
    const used = process.cpuUsage(loader0);
    const others = loaderPids.reduce(
      (sum, pid, i) => sum + Math.max(0, (processCpuSeconds(pid) ?? others0[i]!) - others0[i]!),
      0,
    );
    const loader = (used.user + used.system) / 1e6 + (reapedChildrenSeconds() - children0) + others;
    const db1 = databaseSeconds(dbPids);
    const database = db0 !== null && db1 !== null ? db1 - db0 : null;
    const machine1 = machineBusySeconds();
    const rest =
      machine0 !== null && machine1 !== null
        ? // Tick rounding can make the difference slightly negative on an idle machine.
          Math.max(0, machine1 - machine0 - loader - (database ?? 0))
        : null;
    return { loader, database, rest };
  };
}

/**
 * CPU seconds of this process's children that ended and were waited for (cutime and cstime of
 * `/proc/self/stat`, which include their own children): an `ingest --workers` run's processes.
 */
function reapedChildrenSeconds(): number {
  try {
    const text = readFileSync('/proc/self/stat', 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13] ?? 0) + Number(fields[14] ?? 0)) / clockTicksPerSecond();
  } catch {
    return 0;
  }
}

/** The database processes' CPU seconds so far; null without pids or when one is gone. */
function databaseSeconds(pids: readonly number[]): number | null {
  return pids.length === 0 ? null : (totalCpuSeconds(pids) ?? null);
}

/**
 * Busy CPU seconds of the whole machine so far: the first line of `/proc/stat` without idle and
 * iowait (guest time is already counted in user time, so it is left out too).
 */
function machineBusySeconds(): number | null {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
  } catch {
    return null;
  }
  const [label, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/);
  if (label !== 'cpu') return null;
  const ticks = [user, nice, system, irq, softirq, steal].map((v) => Number(v ?? 0));
  if (ticks.some((t) => !Number.isFinite(t))) return null;
  return ticks.reduce((a, b) => a + b, 0) / clockTicksPerSecond();
}
