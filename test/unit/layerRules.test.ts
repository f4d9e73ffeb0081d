import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The layer rules (.dependency-cruiser.mjs) run on a fixture tree laid out like the repository,
// with one wrong import per rule and the right imports each rule must let through
// (test/fixtures/layers; each file says which). A rule whose paths stop matching fails here
// instead of passing silently in `npm run lint`.

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = path.join(root, 'test/fixtures/layers');
const depcruise = path.join(root, 'node_modules/.bin/depcruise');

/** `rule: from -> to` of each error line of depcruise's report, an npm package by its name. */
function violations(report: string): string[] {
  return [...report.matchAll(/^ {2}error ([\w-]+): (\S+) → (\S+)$/gm)].map(([, rule, from, to]) => {
    const pkg = /node_modules\/((@[^/]+\/)?[^/]+)/.exec(to!)?.[1];
    return `${rule}: ${from} -> ${pkg ?? to}`;
  });
}

describe('layer rules', () => {
  it('name every wrong import of the fixture, and only those', () => {
    // A plain report, whatever the environment asks of colours.
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env['FORCE_COLOR'];
    const run = spawnSync(
      depcruise,
      ['--config', path.join(root, '.dependency-cruiser.mjs'), 'src', 'bench', 'test'],
      { cwd: fixture, encoding: 'utf8', env },
    );
    expect(run.error).toBeUndefined();
    expect(violations(run.stdout).sort()).toEqual([
      'bench-through-entries: bench/harness.ts -> test/integration/internal.ts',
      'bench-through-entries: bench/internal.ts -> src/core/fetch/engine.ts',
      'client-only-wire-and-requests: src/client/engine.ts -> src/core/index.ts',
      'client-package-dependencies: src/client/index.ts -> cassandra-driver',
      'core-cache-not-fetch: src/core/cache/warmCache.ts -> src/core/fetch/engine.ts',
      'core-no-grpc: src/core/status.ts -> @grpc/grpc-js',
      'core-not-above: src/core/serve.ts -> src/server/index.ts',
      'core-through-entries: src/server/engine.ts -> src/core/fetch/engine.ts',
      'datasets-not-above: src/datasets/cacheDir.ts -> src/devdb/index.ts',
      'dev-only-through-devOnly: src/cli/dbStart.ts -> src/devdb/index.ts',
      'dev-only-through-devOnly: src/datasets/cacheDir.ts -> src/devdb/index.ts',
      'server-not-above: src/server/benchHelper.ts -> bench/entryOk.ts',
      'server-not-above: src/server/cliFlag.ts -> src/cli/main.ts',
      'src-no-bench-or-test: src/server/benchHelper.ts -> bench/entryOk.ts',
      'tests-not-bench: test/unit/benchTool.ts -> bench/entryOk.ts',
      'tests-through-entries: test/integration/internal.ts -> src/cli/main.ts',
    ]);
    // The command fails (with the number of errors), and so does `npm run lint`.
    expect(run.status).toBe(16);
  });

  it('run in `npm run lint` over the whole repository', () => {
    const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts['lint']).toContain('npm run -s lint:layers');
    expect(scripts['lint:layers']).toBe(
      'depcruise --config .dependency-cruiser.mjs src bench test scripts',
    );
  });
});
