import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderClient } from '../../src/client/index.js';
import { createDbClient } from '../../src/core/index.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import {
  type ServedLoader as Loader,
  metric,
  pidsOf,
  scrape,
  startServeCli as startLoader,
} from '../support/serveCli.js';

const N = 2000;
let db: cassandra.Client;
let ks: string;

async function eventually(what: string, cond: () => boolean | Promise<boolean>, ms = 60_000) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`not in ${ms} ms: ${what}`);
    await sleep(50);
  }
}

async function healthz(loader: Loader): Promise<number> {
  return (await fetch(`http://127.0.0.1:${loader.metricsPort}/healthz`)).status;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(db, ks, N);
}, 180_000);

afterAll(async () => {
  await dropKeyspace(db, ks);
  await db.shutdown();
});

describe('serve --workers 2', () => {
  let loader: Loader;
  let workerPids: Set<number>;

  beforeAll(async () => {
    loader = await startLoader(2);
    workerPids = pidsOf(loader, 'worker serving');
  }, 120_000);

  afterAll(async () => {
    if (loader.child.exitCode === null) loader.child.kill('SIGKILL');
    await loader.done;
  });

  it('starts two worker processes under the primary, each serving the one port', () => {
    expect(workerPids.size).toBe(2);
    expect(workerPids.has(loader.child.pid!)).toBe(false);
    const ports = loader.lines.filter((l) => l['msg'] === 'worker serving').map((l) => l['port']);
    expect(new Set(ports)).toEqual(new Set([loader.port]));
  });

  it('spreads four ranks over both workers and delivers every sample exactly once', async () => {
    const client = new LoaderClient(`127.0.0.1:${loader.port}`);
    const before = loader.lines.length;
    try {
      const ranks = await Promise.all(
        [0, 1, 2, 3].map(async (rank) => {
          const ids: string[] = [];
          for await (const b of client.streamBatches({
            dataset: ks,
            split: 'all',
            batchSize: 50,
            seed: 3,
            epochs: 1,
            rank,
            worldSize: 4,
          })) {
            ids.push(...b.ids);
          }
          return ids;
        }),
      );
      const all = ranks.flat();
      expect(all).toHaveLength(N);
      expect(new Set(all).size).toBe(N);
    } finally {
      client.close();
    }
    const starts = loader.lines.slice(before).filter((l) => l['event'] === 'stream_start');
    expect(starts).toHaveLength(4);
    expect(new Set(starts.map((l) => l['pid']))).toEqual(workerPids);
  });

  it('one scrape of the primary sums both workers and counts the workers', async () => {
    const text = await scrape(loader);
    // Each worker served part of the epoch above; the primary's figure is the whole.
    expect(metric(text, 'scylla_loader_samples_sent_total')).toBe(N);
    expect(metric(text, 'scylla_loader_workers{state="serving"}')).toBe(2);
    expect(metric(text, 'scylla_loader_worker_restarts_total')).toBe(0);
    expect(await healthz(loader)).toBe(200);
    expect(metric(text, 'scylla_loader_metrics_workers_missing')).toBe(0);
  });

  it('a scrape answers while a worker cannot: its last figures, and the missing counted', async () => {
    // A stopped process answers nothing, like a worker whose event loop is stuck for seconds.
    const [stuck] = [...workerPids];
    process.kill(stuck!, 'SIGSTOP');
    try {
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${loader.metricsPort}/metrics`);
      const waited = performance.now() - started;
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(metric(text, 'scylla_loader_metrics_workers_missing')).toBe(1);
      expect(metric(text, 'scylla_loader_metrics_worker_timeouts_total')).toBe(1);
      // The stopped worker counts with its last answer: the sum does not go backwards (a
      // counter that dropped would read as a reset to Prometheus, and every rate() would spike).
      expect(metric(text, 'scylla_loader_samples_sent_total')).toBe(N);
      // It waited for the stopped one no longer than the setting (2 s by default).
      expect(waited).toBeGreaterThanOrEqual(1_900);
      expect(waited).toBeLessThan(10_000);
    } finally {
      process.kill(stuck!, 'SIGCONT');
    }
    const again = await scrape(loader);
    expect(metric(again, 'scylla_loader_metrics_workers_missing')).toBe(0);
    expect(metric(again, 'scylla_loader_samples_sent_total')).toBe(N);
  });

  it('replaces a worker killed mid-epoch; its stream resumes on a worker, exactly once', async () => {
    const client = new LoaderClient(`127.0.0.1:${loader.port}`, {
      reconnect: { attempts: 30, initialBackoffMs: 100, maxBackoffMs: 1000 },
    });
    let reconnects = 0;
    let victim: number | undefined;
    let sawDown = false;
    const ids: string[] = [];
    const before = loader.lines.length;
    try {
      for await (const b of client.streamBatches(
        { dataset: ks, split: 'all', batchSize: 25, seed: 11, epochs: 1 },
        { onReconnect: () => reconnects++ },
      )) {
        ids.push(...b.ids);
        await sleep(10);
        if (victim === undefined && ids.length >= 500) {
          const start = loader.lines.slice(before).find((l) => l['event'] === 'stream_start');
          victim = start!['pid'] as number;
          process.kill(victim, 'SIGKILL');
          await eventually(
            'the primary to see the worker down',
            async () => {
              sawDown ||= (await healthz(loader)) === 503;
              return sawDown;
            },
            10_000,
          );
        }
      }
    } finally {
      client.close();
    }
    expect(victim).toBeDefined();
    expect(workerPids.has(victim!)).toBe(true);
    expect(sawDown).toBe(true);
    expect(reconnects).toBeGreaterThan(0);
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);

    // The primary's line and the new worker's own come through one pipe from two processes, in
    // either order: wait for both.
    await eventually(
      'a replacement worker',
      () =>
        loader.lines.some((l) => l['msg'] === 'worker replaced and serving') &&
        pidsOf(loader, 'worker serving').size === 3,
    );
    const now = pidsOf(loader, 'worker serving');
    expect(now.size).toBe(3);
    expect(alive(victim!)).toBe(false);
    await eventually('/healthz ok again', async () => (await healthz(loader)) === 200, 10_000);
    const text = await scrape(loader);
    expect(metric(text, 'scylla_loader_worker_restarts_total')).toBe(1);
    expect(metric(text, 'scylla_loader_workers{state="serving"}')).toBe(2);
    workerPids = new Set([...now].filter(alive));
    expect(workerPids.size).toBe(2);
  });

  it('SIGTERM drains every worker and the primary exits cleanly', async () => {
    loader.child.kill('SIGTERM');
    const result = await loader.done;
    expect(result.code).toBe(0);
    expect(loader.lines.some((l) => l['msg'] === 'loader cluster stopped')).toBe(true);
    for (const pid of workerPids) expect(alive(pid)).toBe(false);
  });
});

describe('serve --workers 1', () => {
  it('is one process, as before workers existed', async () => {
    const loader = await startLoader(1);
    const client = new LoaderClient(`127.0.0.1:${loader.port}`);
    const ids: string[] = [];
    try {
      for await (const b of client.streamBatches({
        dataset: ks,
        split: 'all',
        batchSize: 100,
        seed: 5,
        epochs: 1,
      })) {
        ids.push(...b.ids);
      }
    } finally {
      client.close();
      loader.child.kill('SIGTERM');
    }
    const result = await loader.done;
    expect(result.code).toBe(0);
    expect(new Set(ids).size).toBe(N);
    expect(pidsOf(loader, 'worker serving').size).toBe(0);
    const starts = loader.lines.filter((l) => l['event'] === 'stream_start');
    expect(starts.map((l) => l['pid'])).toEqual([loader.child.pid]);
  }, 120_000);

  it('keeps a sample cache sized from memory by default; --cache-memory-bytes 0 keeps none', async () => {
    // Two epochs of the split: the second finds in memory what the first read.
    const twoEpochs = async (loader: Loader): Promise<string> => {
      const client = new LoaderClient(`127.0.0.1:${loader.port}`);
      try {
        let samples = 0;
        for await (const b of client.streamBatches({
          dataset: ks,
          split: 'all',
          batchSize: 100,
          seed: 9,
          epochs: 2,
        })) {
          samples += b.ids.length;
        }
        expect(samples).toBe(2 * N);
        return await scrape(loader);
      } finally {
        client.close();
        loader.child.kill('SIGTERM');
        await loader.done;
      }
    };
    const configOf = (loader: Loader): Record<string, unknown> =>
      loader.lines.find((l) => l['msg'] === 'serve configuration')!;

    const byDefault = await startLoader(1);
    const text = await twoEpochs(byDefault);
    const logged = configOf(byDefault);
    const bytes = (logged['config'] as { cacheMemoryBytes: number }).cacheMemoryBytes;
    expect(bytes).toBeGreaterThan(0);
    expect(String(logged['cacheMemoryDefault'])).toMatch(/(host|container)'s [\d,]+ MiB/);
    expect(metric(text, 'scylla_loader_cache_memory_bytes')).toBeGreaterThan(0);
    // Every sample of the second epoch, but for the few its reads may have found still in
    // flight from the end of the first (shared, not hits).
    const hits = metric(text, 'scylla_loader_cache_hits_total{tier="memory"}');
    expect(hits).toBeGreaterThan(0.9 * N);
    expect(hits).toBeLessThanOrEqual(N);

    const off = await startLoader(1, ['--cache-memory-bytes', '0']);
    const offText = await twoEpochs(off);
    expect((configOf(off)['config'] as { cacheMemoryBytes: number }).cacheMemoryBytes).toBe(0);
    expect(configOf(off)['cacheMemoryDefault']).toBeUndefined();
    expect(metric(offText, 'scylla_loader_cache_hits_total{tier="memory"}') || 0).toBe(0);
  }, 180_000);

  it('--metrics-host puts /metrics on other addresses than gRPC (a sidecar scraped by its pod address)', async () => {
    // A socket bound to 127.0.0.1 takes no connection for 127.0.0.2; one on 0.0.0.0 does.
    const loader = await startLoader(1, ['--metrics-host', '0.0.0.0']);
    try {
      const health = await fetch(`http://127.0.0.2:${loader.metricsPort}/healthz`);
      expect(health.status).toBe(200);
      const grpcElsewhere = await new Promise<string>((resolve) => {
        const socket = net.connect(loader.port, '127.0.0.2');
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
      expect(grpcElsewhere).toBe('ECONNREFUSED');
    } finally {
      loader.child.kill('SIGTERM');
    }
    expect((await loader.done).code).toBe(0);
  }, 120_000);
});
