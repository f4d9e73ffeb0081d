import { existsSync, readdirSync, statSync } from 'node:fs';
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
 * Set to `build` (as `scripts/test.sh` does once it has built the sources), CLI child processes
 * run the build (`dist/src/cli/main.js`, what the image ships) instead of the sources through
 * tsx: each start then costs about 0.6 CPU seconds instead of 1.6 (tsx compiles every module
 * the CLI loads), once for every loader and CLI command an integration test runs.
 */
export const TEST_CLI_ENV = 'SCYLLA_LOADER_TEST_CLI';

/**
 * Node arguments that run the CLI: `src/cli/main.ts` through tsx, or the built `main.js` when
 * running from the build or when {@link TEST_CLI_ENV} is `build`.
 * @internal
 */
export function cliMainArgs(): string[] {
  if (process.env[TEST_CLI_ENV] === 'build') return [builtCliMain()];
  return scriptArgs(path.resolve(here, '../../src/cli', `main${ext}`));
}

/** The build's CLI entry, once checked to be newer than every source file. */
let builtCli: string | undefined;

/**
 * `dist/src/cli/main.js`, refused when it is missing or older than a file under `src/` (the
 * generated code aside, as `npm run build` makes it first): tests must not run a stale build.
 * @internal
 */
export function builtCliMain(): string {
  if (builtCli !== undefined) return builtCli;
  const built = path.join(packageRoot, 'dist', 'src', 'cli', 'main.js');
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0;
  if (builtAt < newestSourceMtime()) {
    throw new Error(
      `${TEST_CLI_ENV}=build but ${built} is missing or older than src/: run npm run build:tsc`,
    );
  }
  builtCli = built;
  return built;
}

/** The latest modification time of a file under `src/`, generated code aside, ms. @internal */
export function newestSourceMtime(): number {
  const src = path.join(packageRoot, 'src');
  let newest = 0;
  for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
    const p = path.join(entry.parentPath, entry.name);
    if (entry.isFile() && !p.includes(`${path.sep}generated${path.sep}`)) {
      newest = Math.max(newest, statSync(p).mtimeMs);
    }
  }
  return newest;
}

/**
 * Node arguments that run `script` (a module path without its extension, or with this file's):
 * through tsx from source, directly from the build. @internal
 */
export function scriptArgs(script: string): string[] {
  const file = path.extname(script) ? script : `${script}${ext}`;
  return ext === '.ts' ? ['--import', 'tsx', file] : [file];
}
