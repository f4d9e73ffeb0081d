import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { ReadyInfo } from '../../src/testing/index.js';
import { waitUntilReady } from '../../src/cli/index.js';

/** A fresh path for `serve --ready-file` / `SCYLLA_LOADER_READY_FILE`. */
export function newReadyFile(): string {
  return path.join(os.tmpdir(), `sl-test-ready-${randomBytes(6).toString('hex')}.json`);
}

/**
 * What a `serve` child bound, once it wrote its ready file (the CLI's own wait, which the demo
 * and the benchmarks use); rejects when the child exits first or after `timeoutMs`.
 */
export function waitForReadyFile(
  child: ChildProcess,
  file: string,
  timeoutMs = 60_000,
): Promise<ReadyInfo> {
  return waitUntilReady(child, { readyFile: file, timeoutMs, output: () => '(see its output)' });
}
