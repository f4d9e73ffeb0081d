import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerMetrics } from '../../src/server/metrics/serverMetrics.js';
import { hashToken } from '../../src/server/auth/hashToken.js';
import { newToken } from '../../src/server/auth/newToken.js';
import { TokenStore } from '../../src/server/auth/TokenStore.js';

const silent = pino({ level: 'silent' });
const stores: TokenStore[] = [];

afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});

function tokensJson(name: string, token: string): string {
  const sha256 = hashToken(token).toString('hex');
  return JSON.stringify({ tokens: [{ name, sha256, role: 'reader', datasets: ['*'] }] });
}

/** Writes the file whole, by rename, as a Secret update does. */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

async function until(cond: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('TokenStore when its file breaks', () => {
  it('says so in a gauge, a counter and a health line, keeping the last good tokens', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'sl-store-')), 'tokens.json');
    const token = newToken();
    writeFileSync(file, tokensJson('trainer-a', token));
    const metrics = createServerMetrics();
    const store = new TokenStore({ file, reloadIntervalMs: 20, logger: silent, metrics });
    stores.push(store);
    const stale = async (): Promise<number> =>
      (await metrics.authTokensFileStale.get()).values[0]!.value;
    const failures = async (): Promise<number> =>
      (await metrics.authTokensReloadFailures.get()).values[0]!.value;
    expect(store.staleness()).toBeUndefined();
    expect(await stale()).toBe(0);

    replace(file, `{"tokens": [ ${token}`);
    await until(() => store.staleness() !== undefined);
    const line = store.staleness()!;
    expect(line).toMatch(
      /^tokens file stale since \d{4}-\d\d-\d\dT.*Z: tokens file .*tokens\.json is not valid JSON.*; the tokens read at .*Z stay in force$/,
    );
    expect(line).not.toContain(token);
    expect(line).not.toContain('\n');
    expect(await stale()).toBe(1);
    expect(await failures()).toBeGreaterThan(0);
    expect(store.grants.map((g) => g.name)).toEqual(['trainer-a']);

    rmSync(file);
    await until(() => store.staleness()?.includes('no such file') ?? false);
    expect(store.staleness()).toContain(`cannot read ${file}: no such file`);
    // Stale since the first failure, not the latest one.
    expect(store.staleness()!.slice(0, 48)).toBe(line.slice(0, 48));

    replace(file, tokensJson('trainer-b', token));
    await until(() => store.staleness() === undefined);
    expect(await stale()).toBe(0);
    expect(store.grants.map((g) => g.name)).toEqual(['trainer-b']);
  });

  it('recovers when the file comes back unchanged', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'sl-store-')), 'tokens.json');
    const text = tokensJson('trainer-a', newToken());
    writeFileSync(file, text);
    const metrics = createServerMetrics();
    const store = new TokenStore({ file, reloadIntervalMs: 20, logger: silent, metrics });
    stores.push(store);
    rmSync(file);
    await until(() => store.staleness() !== undefined);
    replace(file, text);
    await until(() => store.staleness() === undefined);
    expect((await metrics.authTokensFileStale.get()).values[0]!.value).toBe(0);
  });
});
