import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultStateDir } from '../../src/devdb/index.js';
import { type LocalCluster, startLocalCluster } from '../../src/devdb/index.js';
import { localClusterStatus } from '../../src/devdb/index.js';
import { isProcessAlive } from '../../src/devdb/index.js';
import { stopLocalCluster } from '../../src/devdb/index.js';
import { stopLocalNode } from '../../src/devdb/index.js';
import { createTestKeyspace, dropKeyspace } from '../support/dbHelpers.js';

const { consistencies } = cassandra.types;

// Its own addresses and cluster name: the shared node on 127.0.0.1 keeps running next to it on
// the same ports, which only works because every node binds its own address.
const RING_ADDRESSES = ['127.0.0.21', '127.0.0.22'];

describe('a two-node local ring', () => {
  let stateDir: string;
  let ring: LocalCluster;
  let client: cassandra.Client;

  beforeAll(async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'sl-ring-'));
    ring = await startLocalCluster({
      stateDir,
      nodes: 2,
      firstAddress: '127.0.0.21',
      clusterName: 'scylla-loader-ring-test',
      // Two JVMs on a 2-core box next to the shared node: keep them small.
      heapMb: 512,
      timeoutMs: 240_000,
      log: (line) => console.log(`[ring] ${line}`),
    });
    client = new cassandra.Client({
      contactPoints: ring.contactPoints,
      localDataCenter: ring.localDataCenter,
      protocolOptions: { port: ring.port },
    });
    await client.connect();
  });

  afterAll(async () => {
    await client?.shutdown();
    if (stateDir) {
      await stopLocalCluster(stateDir);
      await rm(stateDir, { recursive: true, force: true });
      expect(existsSync(stateDir)).toBe(false);
    }
  });

  it('starts both nodes, and each sees the other', async () => {
    expect(ring.reused).toBe(false);
    expect(ring.contactPoints).toEqual(RING_ADDRESSES);
    const connected = client
      .getState()
      .getConnectedHosts()
      .map((h) => h.address)
      .sort();
    expect(connected).toEqual(RING_ADDRESSES.map((a) => `${a}:${ring.port}`));

    for (const host of client.hosts.values()) {
      const local = await client.execute('SELECT release_version FROM system.local', [], { host });
      expect(String(local.first()?.['release_version'])).toMatch(/^5\.0\./);
      const peers = await client.execute('SELECT peer FROM system.peers', [], { host });
      const others = RING_ADDRESSES.filter((a) => !host.address.startsWith(`${a}:`));
      expect(peers.rows.map((r) => String(r['peer']))).toEqual(others);
    }
  });

  it('replicates a row to both nodes (RF 2, consistency ALL)', async () => {
    const ks = await createTestKeyspace(client, 2);
    try {
      await client.execute(`CREATE TABLE ${ks}.kv (k text PRIMARY KEY, v blob)`);
      const value = randomBytes(100_000);
      const all = { prepare: true, consistency: consistencies.all };
      await client.execute(`INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, ['a', value], all);
      const rs = await client.execute(`SELECT v FROM ${ks}.kv WHERE k = ?`, ['a'], all);
      expect(Buffer.compare(rs.first()?.['v'] as Buffer, value)).toBe(0);
    } finally {
      await dropKeyspace(client, ks);
    }
  });

  it('loses one node and gets it back', async () => {
    const ks = await createTestKeyspace(client, 2);
    try {
      await client.execute(`CREATE TABLE ${ks}.kv (k text PRIMARY KEY, v int)`);
      // A crash, not a clean shutdown: what a node loss mid-epoch looks like.
      expect(await stopLocalNode(stateDir, 2, { signal: 'SIGKILL' })).toEqual({ stopped: true });
      const during = await localClusterStatus(stateDir);
      expect(during.nodes.map((n) => n.running)).toEqual([true, false]);

      // Idempotent, so a request that was on its way to the killed node goes to the other one.
      const one = { prepare: true, consistency: consistencies.one, isIdempotent: true };
      await client.execute(`INSERT INTO ${ks}.kv (k, v) VALUES (?, ?)`, ['while-down', 1], one);

      const again = await startLocalCluster({ stateDir, timeoutMs: 240_000 });
      expect(again.reused).toBe(false);
      const after = await localClusterStatus(stateDir);
      expect(after.nodes.map((n) => n.running && n.cqlUp)).toEqual([true, true]);

      // Node 2 missed the write; a read at ALL repairs it on the way.
      const all = { prepare: true, consistency: consistencies.all };
      const rs = await client.execute(`SELECT v FROM ${ks}.kv WHERE k = ?`, ['while-down'], all);
      expect(rs.first()?.['v']).toBe(1);
    } finally {
      await dropKeyspace(client, ks);
    }
  });

  it('stops both nodes', async () => {
    const before = await localClusterStatus(stateDir);
    expect(before.nodes.map((n) => n.running && n.cqlUp)).toEqual([true, true]);
    const pids = before.nodes.map((n) => n.pid ?? 0);
    await client.shutdown();

    expect(await stopLocalCluster(stateDir)).toEqual({ stopped: 2 });
    for (const pid of pids) expect(isProcessAlive(pid)).toBe(false);
    const after = await localClusterStatus(stateDir);
    expect(after.nodes.map((n) => n.running || n.cqlUp)).toEqual([false, false]);
    expect(after.nodes.map((n) => n.pid)).toEqual([null, null]);
  });
});

describe('the shared local node', () => {
  // Against an external cluster there is no local node to reuse.
  it.skipIf(Boolean(process.env.SCYLLA_LOADER_CONTACT_POINTS))(
    'is reused, not started again, once the global setup started it',
    async () => {
      const started = Date.now();
      const shared = await startLocalCluster({ stateDir: defaultStateDir() });
      expect(shared.reused).toBe(true);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(shared.contactPoints).toEqual(['127.0.0.1']);

      const { nodes } = await localClusterStatus(defaultStateDir());
      expect(nodes).toHaveLength(1);
      expect(nodes[0]).toMatchObject({ address: '127.0.0.1', running: true, cqlUp: true });
      expect(nodes[0]?.logFile).toBe(shared.logFiles[0]);
    },
  );
});
