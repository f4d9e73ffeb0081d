import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_TOXIC_KINDS, runFaultScenario } from '../../bench/faults/faultScenarios.js';
import { prepareFaultDataset } from '../../bench/faults/prepareFaultDataset.js';
import type { FaultBed, ScenarioResult } from '../../bench/faults/runScenario.js';
import { createDbClient } from '../../src/core/index.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from './dbHelpers.js';
import { toolPath } from '../support/toolPath.js';

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
  bed = {
    db: testDbConfig(),
    client,
    data,
    toxiproxy: toolPath('toxiproxy-server'),
    log: (line) => console.log(line),
  };
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

describe('network faults through toxiproxy, 4 ranks, checked by the fault checker', () => {
  for (const kind of DB_TOXIC_KINDS) {
    it(`loader to database: ${kind} for 2 s`, async () => {
      const result = await runFaultScenario(bed, `db ${kind}`, 'quick');
      expectExactlyOnce(result);
      expect(result.faults).toEqual({ [`db ${kind}`]: 1 });
    });
  }

  it('trainer to loader: connections reset while a batch crosses them', async () => {
    const result = await runFaultScenario(bed, 'client reset', 'quick');
    expectExactlyOnce(result);
    expect(result.faults).toEqual({ 'client reset mid-batch': 2 });
    // Each reset broke the ranks' calls: they came back by token.
    expect(result.verdict.reconnects).toBeGreaterThanOrEqual(2);
  });

  it('a run of 12 mixed faults over 4 epochs', async () => {
    const result = await runFaultScenario(bed, 'mixed', 'quick', {
      faults: 12,
      epochs: 4,
      seed: 16,
    });
    expectExactlyOnce(result);
    expect(result.faultCount).toBe(12);
    // Loader restarts take 10-30 s on a loaded 2-core machine; with 3 epochs the run ended
    // after 10 or 11 of the 12 faults there.
  }, 300_000);
});
