import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Folder where scripts/tools/*.sh install the deployment checks' tools. */
export function toolsDir(): string {
  return path.join(
    process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
    'scylla-loader',
    'tools',
  );
}

/**
 * Path of a tool installed by scripts/tools/*.sh, or found on PATH. Throws an error saying how
 * to install it when it is nowhere, so a missing tool fails its test instead of skipping it.
 */
export function toolPath(name: string): string {
  const installed = path.join(toolsDir(), 'bin', name);
  if (existsSync(installed)) return installed;
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  throw new Error(
    `${name} is not installed; run scripts/setup.sh (it installs it into ${toolsDir()}/bin)`,
  );
}
