import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LoaderError } from '../../src/core/index.js';
import { packageRoot } from '../stream/benchScripts.js';

/** Environment variable naming the Python of the benchmark's legs, over the test venv. */
export const BENCH_PYTHON_ENV = 'SCYLLA_LOADER_BENCH_PYTHON';

/**
 * The Python interpreter that runs `clients/python/bench/transform_legs.py`: `explicit` (the
 * `--python` flag), else `$SCYLLA_LOADER_BENCH_PYTHON`, else the Python client's test venv
 * that `scripts/python-tests.sh` makes (torch, torchvision, PIL, numpy, grpcio): found the way
 * that script names it, a hash of the lock file, `pyproject.toml` and the base interpreter's
 * version, under `${XDG_CACHE_HOME:-~/.cache}/scylla-loader/python`. Throws FAILED_PRECONDITION
 * saying how to get one when there is none.
 *
 * @internal
 */
export function benchPython(
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
  root: string = packageRoot,
): string {
  const given = explicit ?? env[BENCH_PYTHON_ENV];
  if (given) return given;
  const cache = path.join(
    env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'),
    'scylla-loader',
    'python',
  );
  const pkg = path.join(root, 'clients', 'python');
  for (const candidate of [
    env.SCYLLA_LOADER_PYTHON,
    'python3.13',
    'python3.12',
    'python3.11',
    'python3.10',
    'python3',
  ]) {
    if (!candidate) continue;
    // The same test as python-tests.sh: the first 3.10+ with the venv module is its base.
    const probe = spawnSync(
      candidate,
      ['-c', 'import sys, venv; sys.exit(sys.version_info < (3, 10))'],
      { stdio: 'ignore' },
    );
    if (probe.status !== 0) continue;
    const version = spawnSync(candidate, ['-c', 'import sys; print(sys.version_info[:2])'], {
      encoding: 'utf8',
    }).stdout;
    const key = createHash('sha256')
      .update(readFileSync(path.join(pkg, 'requirements', 'test-lock.txt')))
      .update(readFileSync(path.join(pkg, 'pyproject.toml')))
      .update(version)
      .digest('hex')
      .slice(0, 16);
    const venv = path.join(cache, `venv-${key}`);
    if (existsSync(path.join(venv, '.complete'))) return path.join(venv, 'bin', 'python');
    break;
  }
  throw new LoaderError(
    'FAILED_PRECONDITION',
    `no Python for the benchmark's legs: run scripts/python-tests.sh once (it makes the test ` +
      `venv under ${cache}), or pass --python / set ${BENCH_PYTHON_ENV} to a Python with ` +
      'torch, torchvision, pillow, numpy and grpcio',
  );
}
