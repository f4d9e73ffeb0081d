import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type cassandra from 'cassandra-driver';
import { stringify } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/index.js';
import { LoaderClient } from '../../src/client/index.js';
import type { DecodedBatch } from '../../src/client/index.js';
import type { StreamBatchesOptions } from '../../src/client/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import {
  createDbClient,
  epochShard,
  datasetNamespace,
  sampleId,
  loadSplitIds,
} from '../../src/core/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { collect, spawnCli } from '../support/runCli.js';
import { newReadyFile, waitForReadyFile } from '../support/readyFile.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

const N = 1500;
const resumeKey = randomBytes(32).toString('hex');
let db: cassandra.Client;
let ks: string;
let bigKs: string;
let server: LoaderServer;
let client: LoaderClient;
let expected: Map<string, { label: number; data: Buffer }>;

async function all(
  c: LoaderClient,
  req: StreamBatchesOptions,
  each?: (b: DecodedBatch) => Promise<void> | void,
): Promise<DecodedBatch[]> {
  const out: DecodedBatch[] = [];
  for await (const b of c.streamBatches(req)) {
    out.push(b);
    await each?.(b);
  }
  return out;
}

const idsOf = (batches: DecodedBatch[]): string[] => batches.flatMap((b) => b.ids);

async function metricValue(name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').at(-1)) : NaN;
}

async function codeOf(req: StreamBatchesOptions): Promise<string> {
  try {
    await all(client, req);
    return 'OK';
  } catch (err) {
    expect(err).toBeInstanceOf(ClientError);
    return (err as ClientError).codeName;
  }
}

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  bigKs = uniqueKeyspace();
  expected = await ingestSmallDataset(db, ks, N);
  await ingestSmallDataset(db, bigKs, 1200, 10, 16 * 1024);
  server = await startTestServer({ resumeKey, maxInFlightPerStream: 32 });
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
});

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  await dropKeyspace(db, ks);
  await dropKeyspace(db, bigKs);
  await db.shutdown();
});

describe('StreamBatches through the SDK', () => {
  it('an epoch delivers every id exactly once, with the labels and bytes the database holds', async () => {
    const batches = await all(client, { dataset: ks, split: 'all', batchSize: 64, seed: 3 });
    const ns = datasetNamespace(ks);
    const byId = new Map([...expected].map(([k, v]) => [sampleId(k, ns), v]));
    const ids = idsOf(batches);
    expect(ids).toHaveLength(N);
    expect(new Set(ids)).toEqual(new Set(byId.keys()));
    for (const b of batches) {
      b.ids.forEach((id, i) => {
        expect(b.labels[i]).toBe(byId.get(id)!.label);
        expect(b.samples[i]!.equals(byId.get(id)!.data)).toBe(true);
      });
    }
    expect(batches.at(-1)!.lastInEpoch).toBe(true);
    expect(await metricValue('scylla_loader_samples_sent_total')).toBeGreaterThanOrEqual(N);
    expect(await metricValue('scylla_loader_batches_sent_total')).toBeGreaterThan(0);
  });

  it('IN_ORDER gives the exact permutation order; OUT_OF_ORDER the same set', async () => {
    const req = { dataset: ks, split: 'all', batchSize: 50, seed: 11, firstEpoch: 2 } as const;
    const inOrder = idsOf(await all(client, { ...req, ordering: 'in-order' }));
    const split = await loadSplitIds(db, ks);
    const shard = epochShard({
      n: split.count,
      seed: 11n,
      epoch: 2,
      rank: 0,
      worldSize: 1,
      shardRule: 'uneven',
      shuffle: 'uniform',
      batchSize: 50,
      dropLast: false,
    });
    const want = Array.from({ length: shard.length }, (_, j) =>
      stringify(split.ids, shard.storedPosition(j) * 16),
    );
    expect(inOrder).toEqual(want);
    const ooo = idsOf(await all(client, { ...req, ordering: 'out-of-order' }));
    expect([...ooo].sort()).toEqual([...want].sort());
  });

  it('world size 2 (uneven) gives disjoint shards whose union is the split', async () => {
    const req = { dataset: ks, split: 'all', batchSize: 64, seed: 5, worldSize: 2 };
    const [a, b] = await Promise.all(
      [0, 1].map(async (rank) => idsOf(await all(client, { ...req, rank }))),
    );
    expect(a!.length + b!.length).toBe(N);
    expect(new Set([...a!, ...b!]).size).toBe(N);
  });

  it('gives each invalid request its code', async () => {
    const ok = { dataset: ks, split: 'all', batchSize: 16 };
    expect(await codeOf({ ...ok, batchSize: 0 })).toBe('INVALID_ARGUMENT');
    expect(await codeOf({ ...ok, batchSize: 9000 })).toBe('INVALID_ARGUMENT');
    expect(await codeOf({ ...ok, rank: 2, worldSize: 2 })).toBe('INVALID_ARGUMENT');
    expect(await codeOf({ ...ok, prefetch: 1000 })).toBe('INVALID_ARGUMENT');
    expect(await codeOf({ ...ok, dataset: 'Bad Name' })).toBe('INVALID_ARGUMENT');
    expect(await codeOf({ ...ok, dataset: 'no_such_dataset' })).toBe('NOT_FOUND');
    expect(await codeOf({ ...ok, split: 'nope/train' })).toBe('NOT_FOUND');
    // Tokens: tampered, or from another request.
    const first = (await all(client, { ...ok, seed: 1 }))[0]!;
    const tampered = Buffer.from(first.resumeToken);
    tampered[5]! ^= 0xff;
    expect(await codeOf({ ...ok, seed: 1, resumeToken: tampered })).toBe('INVALID_ARGUMENT');
    expect(await codeOf({ ...ok, seed: 2, resumeToken: first.resumeToken })).toBe(
      'INVALID_ARGUMENT',
    );
  });

  it('a cancelled stream stops its database reads and its in-flight gauge returns to zero', async () => {
    const abort = new AbortController();
    const readsBefore = await metricValue(
      'scylla_loader_db_read_duration_seconds_count{path="primary"}',
    );
    let sawInFlight = 0;
    await expect(
      (async () => {
        for await (const b of client.streamBatches(
          { dataset: bigKs, split: 'all', batchSize: 8, prefetch: 16 },
          { signal: abort.signal },
        )) {
          void b;
          sawInFlight = Math.max(
            sawInFlight,
            await metricValue('scylla_loader_db_requests_in_flight'),
          );
          if (sawInFlight > 0) abort.abort();
        }
      })(),
    ).rejects.toThrow();
    expect(sawInFlight).toBeGreaterThan(0);
    const deadline = Date.now() + 5000;
    while (
      (await metricValue('scylla_loader_db_requests_in_flight')) > 0 &&
      Date.now() < deadline
    ) {
      await sleep(20);
    }
    expect(await metricValue('scylla_loader_db_requests_in_flight')).toBe(0);
    const reads = await metricValue('scylla_loader_db_read_duration_seconds_count{path="primary"}');
    await sleep(500);
    expect(await metricValue('scylla_loader_db_read_duration_seconds_count{path="primary"}')).toBe(
      reads,
    );
    expect(reads - (Number.isNaN(readsBefore) ? 0 : readsBefore)).toBeLessThan(1200);
    expect(await metricValue('scylla_loader_active_streams')).toBe(0);
  });

  it('a slow consumer keeps what the server holds within its window', async () => {
    // 1,200 samples of 16 KiB, 20 times the window of 2 x 30; a small HTTP/2 window so the
    // server really waits for the client instead of pushing everything into the socket.
    const slow = new LoaderClient(`127.0.0.1:${server.port}`, { flowControlWindow: 64 * 1024 });
    // Samples read, not reads: a hedged second read of a stuck sample holds nothing more.
    const hedged = async () =>
      (await metricValue('scylla_loader_db_hedged_reads_total{path="primary"}')) || 0;
    const reads = async () =>
      (await metricValue('scylla_loader_db_read_duration_seconds_count{path="primary"}')) -
      (await hedged());
    const sent = () => metricValue('scylla_loader_samples_sent_total');
    const blockedBefore = await metricValue('scylla_loader_client_blocked_seconds_total');
    const [r0, s0] = [await reads(), await sent()];
    let worst = 0;
    try {
      const batches = await all(
        slow,
        { dataset: bigKs, split: 'all', batchSize: 30, prefetch: 2 },
        async () => {
          await sleep(15);
          worst = Math.max(worst, (await reads()) - r0 - ((await sent()) - s0));
        },
      );
      expect(idsOf(batches)).toHaveLength(1200);
    } finally {
      slow.close();
    }
    // Read but not yet written: at most the window (60) plus the batch being written (30).
    expect(worst).toBeLessThanOrEqual(90);
    expect(await metricValue('scylla_loader_client_blocked_seconds_total')).toBeGreaterThan(
      blockedBefore,
    );
  });

  it('the loader killed with SIGKILL mid-epoch and restarted: the SDK resumes, exactly once', async () => {
    const db = testDbConfig();
    const env = {
      ...dbEnv(db),
      SCYLLA_LOADER_RESUME_KEY: resumeKey,
      SCYLLA_LOADER_LOG_LEVEL: 'warn',
    };
    // Each start is waited for by its ready file (a cold, loaded machine can take longer to
    // start a loader than a client's reconnects last); the restart takes the first one's port.
    const start = async (grpcPort: number) => {
      const readyFile = newReadyFile();
      const child = spawnCli(
        ['serve', '--host', '127.0.0.1', '--grpc-port', String(grpcPort), '--metrics-port', '0'],
        { ...env, SCYLLA_LOADER_READY_FILE: readyFile },
      );
      return { child, ready: await waitForReadyFile(child, readyFile) };
    };
    const first = await start(0);
    const { port } = first.ready;
    let loader = first.child;
    const resilient = new LoaderClient(`127.0.0.1:${port}`, {
      reconnect: { attempts: 30, initialBackoffMs: 200, maxBackoffMs: 1000 },
    });
    let reconnects = 0;
    let killed = false;
    const ids: string[] = [];
    try {
      for await (const b of resilient.streamBatches(
        { dataset: ks, split: 'all', batchSize: 25, seed: 9, epochs: 1 },
        { onReconnect: () => reconnects++ },
      )) {
        ids.push(...b.ids);
        await sleep(20);
        if (!killed && ids.length >= 500) {
          killed = true;
          loader.kill('SIGKILL');
          await collect(loader);
          loader = (await start(port)).child;
        }
      }
    } finally {
      resilient.close();
      loader.kill('SIGTERM');
      await collect(loader);
    }
    expect(killed).toBe(true);
    expect(reconnects).toBeGreaterThan(0);
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
  });

  it('/metrics passes promtool check metrics', async () => {
    const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
    const file = path.join(os.tmpdir(), `metrics-${process.pid}.txt`);
    await writeFile(file, text);
    const { stdout, stderr } = await promisify(execFile)('sh', [
      '-c',
      `promtool check metrics < ${file}`,
    ]);
    expect(`${stdout}${stderr}`.trim()).toBe('');
  });
});
