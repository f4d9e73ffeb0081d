import { randomBytes } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from './processAlive.js';
import { LoaderError } from '../core/index.js';

/**
 * Takes `<stateDir>/start.lock` so that two starters of one cluster (say the test runner's
 * global setup and a CLI in another terminal) do not both launch a JVM on the same ports. The
 * lock names its holder's pid, so a lock left by a killed process is taken over. Resolves to
 * the release function.
 *
 * @internal
 */
export async function acquireStartLock(
  stateDir: string,
  timeoutMs: number,
  log?: (line: string) => void,
): Promise<() => Promise<void>> {
  const file = path.join(stateDir, 'start.lock');
  const deadline = Date.now() + timeoutMs;
  let announced = false;
  for (;;) {
    // Written aside, then hard-linked into place: the lock appears atomically with its pid, so
    // a reader never sees an empty lock and mistakes it for an abandoned one.
    const mine = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    await writeFile(mine, `${process.pid}\n`);
    try {
      await link(mine, file);
      return () => rm(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      await rm(mine, { force: true });
    }
    const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(holder) || holder <= 0 || !isProcessAlive(holder)) {
      await rm(file, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new LoaderError(
        'UNAVAILABLE',
        `another process (pid ${holder}) is still starting the cluster in ${stateDir}`,
      );
    }
    if (!announced) {
      log?.(`waiting for process ${holder}, which is starting the cluster in ${stateDir}`);
      announced = true;
    }
    await sleep(500);
  }
}
