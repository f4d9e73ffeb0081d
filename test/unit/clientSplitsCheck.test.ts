import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import madge from 'madge';
import { describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/ClientError.js';
import { LoaderClient } from '../../src/client/LoaderClient.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the SDK refuses a split set request with the core validator, before sending it', () => {
  // Nothing listens on port 1: a request that were sent would fail UNAVAILABLE, not like this.
  const client = new LoaderClient('127.0.0.1:1', { reconnect: { attempts: 0 } });

  it.each([
    [
      { filters: [{ column: 'x', min: 5, max: 1 }] },
      'filters.0.min: range min 5 is above max 1, so no sample would pass',
    ],
    [{ parts: { train: 0, val: 1 } }, 'parts.0'],
    [{ parts: {}, folds: 1 }, 'k-fold needs at least 2 folds'],
    [{ classTargets: { ratios: { 0: 0, 1: 1 } } }, 'class ratio of label 0 must be positive'],
    [{ groupBy: ['patient', 'patient'] }, 'groupBy'],
  ])('%j', async (change, words) => {
    const request = { dataset: 'pathology', name: 'main', parts: { train: 7, val: 3 }, ...change };
    const error = await client.createSplits(request).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ codeName: 'INVALID_ARGUMENT' });
    expect((error as ClientError).details).toMatch(/^invalid request: /);
    expect((error as ClientError).details).toContain(words);
  });

  it('loads neither the database driver nor the image library into a trainer', async () => {
    const graph = await madge(path.join(repo, 'src/client/index.ts'), {
      baseDir: repo,
      fileExtensions: ['ts'],
      detectiveOptions: { ts: { skipTypeImports: true }, es6: { skipTypeImports: true } },
    });
    const reached = Object.keys(graph.obj());
    expect(reached).toContain('src/core/splits/splitRequestSchema.ts');
    const heavy = reached.filter((file) =>
      /from '(cassandra-driver|sharp)'/.test(readFileSync(path.join(repo, file), 'utf8')),
    );
    expect(heavy).toEqual([]);
  });
});
