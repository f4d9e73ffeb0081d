import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The state folder of the shared development and test node: `<repo>/.state/db`, where the
 * repository root is the nearest folder at or above the working directory that holds a
 * `package.json` (the working directory itself when there is none). `.state/` is gitignored.
 * Everything that means "the local node" (the CLI, the integration tests' global setup) uses
 * this one folder, so they share one running node instead of starting one each.
 */
export function defaultStateDir(cwd: string = process.cwd()): string {
  let dir = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return path.join(dir, '.state', 'db');
    const parent = path.dirname(dir);
    if (parent === dir) return path.join(path.resolve(cwd), '.state', 'db');
    dir = parent;
  }
}
