import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultStateDir } from '../../src/devdb/index.js';

const self = fileURLToPath(import.meta.url);
const here = path.dirname(self);
/** `.ts` when running from source (through tsx), `.js` when running the build. */
const ext = path.extname(self);

/**
 * The repository's root folder (above `bench/`, which has a `package.json` of its own): child
 * processes run there so `--import tsx` resolves. @internal
 */
export const packageRoot = path.resolve(here, '../..');

/**
 * The local development node's folder, the same as the `scylla-loader` command's in this
 * checkout wherever the bench is started from (`npm run bench` runs in the root, a workspace
 * script in `bench/`). @internal
 */
export const benchStateDir = defaultStateDir(packageRoot);

/**
 * Node arguments that run the CLI (`src/cli/main.ts` through tsx, or the built `main.js`).
 * @internal
 */
export function cliMainArgs(): string[] {
  return scriptArgs(path.resolve(here, '../../src/cli', `main${ext}`));
}

/**
 * Node arguments that run `script` (a module path without its extension, or with this file's):
 * through tsx from source, directly from the build. @internal
 */
export function scriptArgs(script: string): string[] {
  const file = path.extname(script) ? script : `${script}${ext}`;
  return ext === '.ts' ? ['--import', 'tsx', file] : [file];
}
