import { rename, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';

/** What `serve --ready-file` writes once the loader serves: the ports it bound. */
export interface ReadyInfo {
  /** gRPC port (the free one picked for port 0). */
  port: number;
  /** `/metrics` and `/healthz` port. */
  metricsPort: number;
  /** Loader processes behind the port. */
  workers: number;
  /** Process id of `serve` (the primary when there are workers). */
  pid: number;
}

/**
 * Writes `info` as JSON to `file` at once (a temporary file renamed over it), so a reader
 * never sees half of it: the machine-readable signal that the loader serves.
 */
export async function writeReadyFile(file: string, info: ReadyInfo): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(info)}\n`);
  await rename(partial, file);
}

/** Removes the ready file (on shutdown); a missing one is fine. */
export async function removeReadyFile(file: string): Promise<void> {
  await rm(file, { force: true });
}

/** The ready file's content, or undefined while it does not exist yet. */
export function readReadyFile(file: string): ReadyInfo | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as ReadyInfo;
}
