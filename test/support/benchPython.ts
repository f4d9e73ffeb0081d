import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { LoaderError } from '../../src/core/index.js';
import { packageRoot } from './scripts.js';

/** Environment variable naming the Python of the benchmark's legs, over the test venv. */
export const BENCH_PYTHON_ENV = 'SCYLLA_LOADER_BENCH_PYTHON';

/**
 * The Python interpreter that runs `clients/python/bench/transform_legs.py`: `explicit` (the
 * `--python` flag), else `$SCYLLA_LOADER_BENCH_PYTHON`, else the Python client's test venv
 * (torch, torchvision, PIL, numpy, grpcio) as `scripts/python-env.sh --find` names it: the one
 * lookup that `scripts/setup.sh` and `scripts/python-tests.sh` use too, so the bench never
 * guesses a venv the set-up did not make. Throws FAILED_PRECONDITION saying how to get one when
 * there is none. @internal
 */
export function benchPython(
  explicit?: string,
  env: NodeJS.ProcessEnv = process.env,
  root: string = packageRoot,
): string {
  const given = explicit ?? env[BENCH_PYTHON_ENV];
  if (given) return given;
  const script = path.join(root, 'scripts', 'python-env.sh');
  const found = spawnSync('bash', [script, '--find'], { env, encoding: 'utf8' });
  const python = found.stdout.trim();
  if (found.status === 0 && python) return python;
  const why = (found.stderr || found.error?.message || '').trim();
  throw new LoaderError(
    'FAILED_PRECONDITION',
    `no Python for the benchmark's legs (${why || `${script} --find failed`}); ` +
      `make the test venv with scripts/python-env.sh, or pass --python / set ${BENCH_PYTHON_ENV} ` +
      'to a Python with torch, torchvision, pillow, numpy and grpcio',
  );
}
