import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type cassandra from 'cassandra-driver';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFaultScenario } from '../faults/faultScenarios.js';
import { prepareFaultDataset } from '../faults/prepareFaultDataset.js';
import type { FaultBed, ScenarioResult } from '../faults/runScenario.js';
import { createDbClient, type DbConfig } from '../../src/core/index.js';
import { startLocalCluster } from '../../src/devdb/index.js';
import { localClusterStatus } from '../../src/devdb/index.js';
import { stopLocalCluster } from '../../src/devdb/index.js';
import { stopLocalNode } from '../../src/devdb/index.js';
import { ClientError, LoaderClient } from '../../src/client/index.js';
import { startTestServer } from '../support/loaderServer.js';
import { testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

// A ring of its own next to the shared node: own addresses and cluster name (see ring.test.ts).
const FIRST_ADDRESS = '127.0.0.31';

/**
 * Longest a trainer may wait between two batches while a node is lost. The goal is 2 s; the
 * bound is generous because this 2-core machine runs three JVMs, the loader and the trainers
 * at once, and a GC pause of a surviving node lands in the same figure.
 */
const NODE_LOSS_STALL_BOUND_MS = 6_000;

let stateDir: string;
let client: cassandra.Client;
let bed: FaultBed;

beforeAll(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'sl-faults-ring-'));
  const ring = await startLocalCluster({
    stateDir,
    nodes: 3,
    firstAddress: FIRST_ADDRESS,
    clusterName: 'scylla-loader-faults-test',
    heapMb: 512,
    timeoutMs: 300_000,
    log: (line) => console.log(`[ring] ${line}`),
  });
  const db: DbConfig = {
    ...testDbConfig(),
    contactPoints: ring.contactPoints,
    port: ring.port,
    localDataCenter: ring.localDataCenter,
  };
  client = await createDbClient(db);
  const data = await prepareFaultDataset(client, {
    dataset: uniqueKeyspace(),
    samples: 2000,
    sampleBytes: 1000,
    // Every row on all three nodes: any one node may go, and reads and writes at the default
    // LOCAL_QUORUM (2 of 3) still succeed.
    replicationFactor: 3,
  });
  bed = { db, client, data, ringStateDir: stateDir, log: (line) => console.log(line) };
});

afterAll(async () => {
  await client?.shutdown();
  if (stateDir) {
    // The folder is removed next: no node needs to drain its memtables first.
    for (const node of [1, 2, 3]) await stopLocalNode(stateDir, node, { signal: 'SIGKILL' });
    await stopLocalCluster(stateDir);
    await rm(stateDir, { recursive: true, force: true });
    expect(existsSync(stateDir)).toBe(false);
  }
});

function expectExactlyOnce(result: ScenarioResult): void {
  console.log(JSON.stringify(result));
  expect(result.verdict.expectedPerEpoch).toBeGreaterThan(1500);
  expect(result.verdict).toMatchObject({ lost: 0, duplicated: 0, foreign: 0, outOfRange: 0 });
  expect(result.verdict.failedRanks).toBe(0);
  expect(result.verdict.ok).toBe(true);
  expect(result.loaderCrashes).toBe(0);
  // No worker of a `serve --workers N` loader outlived it, none kept its port.
  expect(result.orphanDetails).toEqual([]);
}

describe('database node faults on a 3-node ring (replication 3), checked by the fault checker', () => {
  it('SIGKILL of a node mid-epoch, then its restart: nothing lost, the stall bounded', async () => {
    const result = await runFaultScenario(bed, 'node SIGKILL', 'quick');
    expectExactlyOnce(result);
    expect(result.faults).toEqual({ 'node SIGKILL': 1 });
    expect(result.verdict.longestStallMs).toBeLessThan(NODE_LOSS_STALL_BOUND_MS);
    const { nodes } = await localClusterStatus(stateDir);
    expect(nodes.map((n) => n.running && n.cqlUp)).toEqual([true, true, true]);
  });

  it('SIGSTOP of a node for 6 s, then SIGCONT: the hedged reads carry the epoch', async () => {
    const result = await runFaultScenario(bed, 'node SIGSTOP', 'quick');
    expectExactlyOnce(result);
    expect(result.faults).toEqual({ 'node SIGSTOP': 1 });
    // Well short of the hang: the trainers did not wait for the node to come back. Before the
    // second reads went to the least busy replica and released the stuck first reads' places
    // in the window, they waited the whole hang (6-10 s); since, 0.2-0.6 s on a quiet machine,
    // 1.7 s with three JVMs on these 2 cores, 3.1 s beside the rest of the test command's
    // files (five JVMs).
    expect(result.verdict.longestStallMs).toBeLessThan(5_000);
  });

  it('a rolling restart of all three nodes during one epoch', async () => {
    const result = await runFaultScenario(bed, 'rolling restart', 'quick');
    expectExactlyOnce(result);
    expect(result.faults).toEqual({ 'node restart': 3 });
  }, 400_000);
});

describe('durability at the default consistency on the ring (replication 3)', () => {
  it('ingests and streams with a node down, keeps what it acknowledged through the loss of another, and refuses writes two nodes short naming the setting', async () => {
    const server = await startTestServer(
      { replication: 'simple:3', db: bed.db },
      { logger: pino({ level: 'error' }) },
    );
    const loaderClient = new LoaderClient(`127.0.0.1:${server.port}`, {
      reconnect: { attempts: 0 },
    });
    const dataset = uniqueKeyspace();
    const keys = Array.from({ length: 200 }, (_, i) => `s${i}`);
    const sample = (key: string) => ({
      sourceKey: key,
      data: Buffer.from(`bytes of ${key}`),
      label: 0,
    });
    try {
      // Node 3 lost: LOCAL_QUORUM (2 of 3) still holds for ingest writes and metadata reads.
      expect(await stopLocalNode(stateDir, 3, { signal: 'SIGKILL' })).toEqual({ stopped: true });
      // A write on its way to node 3 when it died loses its connection (UNAVAILABLE): the SDK
      // sends the unacknowledged requests again, as a pipeline's would.
      const writer = new LoaderClient(`127.0.0.1:${server.port}`, {
        reconnect: { attempts: 10, initialBackoffMs: 500, maxBackoffMs: 3000 },
      });
      const summary = await writer.ingest(dataset, keys.map(sample)).finally(() => writer.close());
      expect(summary.acknowledged).toBe(200);
      expect(summary.datasetSamples).toBe(200);

      // Node 3 back (it may have missed the writes), node 1 lost: every acknowledged sample is
      // still on a live replica, and a stream reading at LOCAL_QUORUM delivers each once.
      await startLocalCluster({ stateDir, timeoutMs: 300_000 });
      // It missed the keyspace made while it was down: wait until gossip has brought it over.
      await waitForSchemaAgreement();
      expect(await stopLocalNode(stateDir, 1, { signal: 'SIGKILL' })).toEqual({ stopped: true });
      const quorumReader = await startTestServer({
        db: { ...bed.db, sampleReadConsistency: 'LOCAL_QUORUM' },
      });
      // Until the ring marks node 1 down (seconds), a quorum read may wait on it and time out
      // (UNAVAILABLE): the SDK retries, as a trainer's would.
      const reader = new LoaderClient(`127.0.0.1:${quorumReader.port}`, {
        reconnect: { attempts: 20, initialBackoffMs: 500, maxBackoffMs: 3000 },
      });
      try {
        const seen: string[] = [];
        for await (const b of reader.streamBatches({
          dataset,
          split: 'all',
          batchSize: 50,
          seed: 1,
          missingSamplePolicy: 'fail',
        })) {
          for (const d of b.samples) seen.push(d.toString().replace('bytes of ', ''));
        }
        expect(seen.sort()).toEqual([...keys].sort());
      } finally {
        reader.close();
        await quorumReader.shutdown('test over');
      }

      // Nodes 1 and 2 down, only node 3 up: a write at LOCAL_QUORUM cannot be acknowledged.
      expect(await stopLocalNode(stateDir, 2, { signal: 'SIGKILL' })).toEqual({ stopped: true });
      // Until the ring marks node 2 down, a write may also time out waiting on it, or lose the
      // connection it was on: UNAVAILABLE every time, and the consistency named once known.
      const refusals: ClientError[] = [];
      for (let i = 0; i < 30 && !/consistency/.test(refusals.at(-1)?.details ?? ''); i++) {
        const refusal = await loaderClient.ingest(dataset, [sample(`late${i}`)]).then(
          () => undefined,
          (e: unknown) => e as ClientError,
        );
        if (refusal !== undefined) refusals.push(refusal);
      }
      expect(refusals.map((r) => r.code)).toEqual(refusals.map(() => grpc.status.UNAVAILABLE));
      expect(refusals.at(-1)!.details).toMatch(/LOCAL_QUORUM/);
      expect(refusals.at(-1)!.details).toMatch(/SCYLLA_LOADER_WRITE_CONSISTENCY/);
    } finally {
      loaderClient.close();
      await server.shutdown('test over');
      // The ring is left with nodes 1 and 2 down: this is the file's last test, and afterAll
      // ends the ring whatever its state.
    }
  }, 400_000);
});

/** Waits (up to 2 minutes) until every live node of the ring reports the same schema version. */
async function waitForSchemaAgreement(): Promise<void> {
  for (let i = 0; i < 120; i++) {
    // In the driver since 4.0, missing from its typings.
    const metadata = client.metadata as unknown as { checkSchemaAgreement(): Promise<boolean> };
    if (await metadata.checkSchemaAgreement().catch(() => false)) return;
    await sleep(1000);
  }
  throw new Error('the ring did not agree on its schema within 2 minutes');
}
