import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LoaderError } from '../../src/core/index.js';

/**
 * Path of `toxiproxy-server`: where `scripts/tools/toxiproxy.sh` installs it
 * (`${XDG_CACHE_HOME:-~/.cache}/scylla-loader/tools/bin`), or on PATH. Throws an error saying
 * how to install it when it is nowhere. @internal
 */
export function toxiproxyBinary(): string {
  const tools = path.join(
    process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
    'scylla-loader',
    'tools',
    'bin',
  );
  for (const dir of [tools, ...(process.env.PATH ?? '').split(path.delimiter)]) {
    const candidate = path.join(dir, 'toxiproxy-server');
    if (dir && existsSync(candidate)) return candidate;
  }
  throw new LoaderError(
    'FAILED_PRECONDITION',
    `toxiproxy-server is not installed; run scripts/setup.sh or scripts/tools/toxiproxy.sh ` +
      `(it installs it into ${tools})`,
  );
}
