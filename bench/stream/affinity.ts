import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Whether `taskset` (util-linux) can be run here. @internal */
export async function hasTaskset(): Promise<boolean> {
  try {
    await run('taskset', ['--version']);
    return true;
  } catch {
    return false;
  }
}

/** The CPU list a process may run on, e.g. `0,1` or `0-3` (`taskset -pc`). @internal */
export async function getAffinity(pid: number): Promise<string> {
  const { stdout } = await run('taskset', ['-pc', String(pid)]);
  // "pid 123's current affinity list: 0,1"
  const list = stdout.slice(stdout.lastIndexOf(':') + 1).trim();
  if (!/^[0-9,-]+$/.test(list)) throw new Error(`unexpected taskset output: ${stdout.trim()}`);
  return list;
}

/**
 * Sets the CPU list of a process and all its threads (`taskset -apc`): a JVM's threads each
 * have their own affinity, so pinning only the main thread would leave the workers free. @internal
 */
export async function setAffinity(pid: number, cpuList: string): Promise<void> {
  await run('taskset', ['-apc', cpuList, String(pid)]);
}

/** The CPUs in a list such as `0-2,5`, in order. @internal */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.split(',')) {
    const [a, b] = part.split('-').map(Number);
    if (a === undefined || Number.isNaN(a)) continue;
    for (let c = a; c <= (b ?? a); c++) cpus.push(c);
  }
  return cpus;
}
