import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { type ReadyInfo, readReadyFile } from '../../src/cli/readyFile.js';

/** A fresh path for `serve --ready-file` / `SCYLLA_LOADER_READY_FILE`. */
export function newReadyFile(): string {
  return path.join(os.tmpdir(), `sl-test-ready-${randomBytes(6).toString('hex')}.json`);
}

/**
 * What a `serve` child bound, once it wrote its ready file; rejects when the child exits first
 * or after `timeoutMs`.
 */
export function waitForReadyFile(
  child: ChildProcess,
  file: string,
  timeoutMs = 60_000,
): Promise<ReadyInfo> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const onExit = (code: number | null): void => {
      clearInterval(poll);
      reject(new Error(`serve exited (${code}) before it was ready`));
    };
    const poll = setInterval(() => {
      const ready = readReadyFile(file);
      if (ready !== undefined) {
        clearInterval(poll);
        child.off('exit', onExit);
        resolve(ready);
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(poll);
        child.off('exit', onExit);
        reject(new Error(`serve did not write ${file} within ${timeoutMs} ms`));
      }
    }, 25);
    child.once('exit', onExit);
  });
}
