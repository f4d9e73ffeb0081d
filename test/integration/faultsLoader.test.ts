import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFaultScenario, WARM_CACHE_DIR } from '../faults/faultScenarios.js';
import { prepareFaultDataset } from '../faults/prepareFaultDataset.js';
import { readSplitIds } from '../faults/readSplitIds.js';
import type { FaultBed, ScenarioResult } from '../faults/runScenario.js';
import { decodeCacheEntry } from '../../src/testing/index.js';
import { DiskTier } from '../../src/testing/index.js';
import {
  cacheKey,
  cacheScope,
  createDbClient,
  readDatasetGeneration,
} from '../../src/core/index.js';
import { resolveWorkerCount } from '../../src/testing/index.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

let client: cassandra.Client;
let bed: FaultBed;

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  const data = await prepareFaultDataset(client, {
    dataset: uniqueKeyspace(),
    samples: 1500,
    sampleBytes: 1000,
    replicationFactor: 1,
  });
  bed = { db: testDbConfig(), client, data, log: (line) => console.log(line) };
});

afterAll(async () => {
  if (bed) await dropKeyspace(client, bed.data.dataset);
  await client?.shutdown();
});

/** What every fault scenario must show: every sample of every epoch exactly once. */
function expectExactlyOnce(result: ScenarioResult): void {
  console.log(JSON.stringify(result));
  expect(result.verdict.expectedPerEpoch).toBeGreaterThan(1000);
  expect(result.verdict).toMatchObject({ lost: 0, duplicated: 0, foreign: 0, outOfRange: 0 });
  expect(result.verdict.failedRanks).toBe(0);
  expect(result.verdict.ok).toBe(true);
  expect(result.loaderCrashes).toBe(0);
  // No worker of a `serve --workers N` loader outlived it, none kept its port.
  expect(result.orphanDetails).toEqual([]);
  expect(result.faultCount).toBeGreaterThan(0);
}

describe('loader faults, 4 ranks, checked by the fault checker', () => {
  it('SIGKILL of the loader mid-epoch, restarted: the ranks resume by token', async () => {
    const result = await runFaultScenario(bed, 'loader SIGKILL', 'quick');
    expectExactlyOnce(result);
    expect(result.faults).toEqual({ 'loader SIGKILL': 1 });
    // The kill reached every rank mid-stream: each reconnected at least once.
    expect(result.verdict.reconnects).toBeGreaterThanOrEqual(4);
    expect(result.loaders).toBe(2);
    // The product's default (`serve` without --workers: one worker per CPU of the quota).
    expect(result.workersPerLoader).toBe(resolveWorkerCount(0));
  });

  it('SIGKILL of a loader with a warm disk cache, restarted on the same store', async () => {
    const result = await runFaultScenario(bed, 'loader SIGKILL, warm cache', 'quick');
    expectExactlyOnce(result);
    expect(result.faults).toEqual({ 'loader SIGKILL': 1 });
    expect(result.verdict.reconnects).toBeGreaterThanOrEqual(4);
    // The store the kill may have hit mid-commit opens, and every sample of the split is in it
    // (the first epoch filled it), whole: the kill damaged nothing.
    const { dataset } = bed.data;
    const scope = cacheScope(dataset, (await readDatasetGeneration(client, dataset))!);
    const ignore = (): void => undefined;
    const tier = DiskTier.open(WARM_CACHE_DIR, 10 * 1024 ** 3, {
      onCommit: ignore,
      onError: ignore,
      onDrop: ignore,
    });
    try {
      const ids = await readSplitIds(client, dataset, bed.data.split);
      const count = ids.size;
      let whole = 0;
      for (const id of ids) {
        const key = cacheKey(scope, Buffer.from(id, 'hex'));
        const entry = tier.get(key);
        if (entry && decodeCacheEntry(key, entry)) whole++;
      }
      expect(whole).toBe(count);
    } finally {
      await tier.close();
    }
  });

  it('SIGTERM of the loader mid-epoch (1 s grace), restarted', async () => {
    const result = await runFaultScenario(bed, 'loader SIGTERM', 'quick');
    expectExactlyOnce(result);
    expect(result.verdict.reconnects).toBeGreaterThanOrEqual(4);
  });

  it('a second loader sharing the resume key takes over from a killed one', async () => {
    const result = await runFaultScenario(bed, 'loader hand-off', 'quick');
    expectExactlyOnce(result);
    expect(result.verdict.reconnects).toBeGreaterThanOrEqual(4);
  });

  it('the admission limit turns ranks away with RESOURCE_EXHAUSTED until a slot frees', async () => {
    const result = await runFaultScenario(bed, 'admission', 'quick');
    expectExactlyOnce(result);
    expect(result.verdict.reconnectsByCode['RESOURCE_EXHAUSTED']).toBeGreaterThan(0);
    expect(result.workersPerLoader).toBe(1);
  });
});
