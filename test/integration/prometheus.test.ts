import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderClient } from '../../src/client/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { createDbClient } from '../../src/core/index.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { toolPath } from '../support/toolPath.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * A real Prometheus server (Debian package `prometheus`) scrapes an in-process loader every
 * second; after streaming through the SDK, Prometheus's HTTP API must show the loader's series
 * with the values the client saw. Prometheus runs on a free loopback port with its config and
 * TSDB in a temporary folder, so the system's own Prometheus service and data are left alone.
 */

const run = promisify(execFile);
const N = 400;
const JOB = 'scylla-loader';

let db: cassandra.Client;
let ks: string;
let server: LoaderServer;
let client: LoaderClient;
let tmp: string;
let prometheus: ChildProcess | undefined;
let prometheusLog = '';
let promUrl: string;

/** A free TCP port on 127.0.0.1 (closed again before it is handed out). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `probe` until it returns a value or `timeoutMs` passes; the error names `what`. */
async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (prometheus?.exitCode !== null && prometheus?.exitCode !== undefined) {
      throw new Error(
        `prometheus exited (${prometheus.exitCode}) while waiting for ${what}:\n${prometheusLog}`,
      );
    }
    await sleep(250);
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}` +
      (last ? ` (last error: ${(last as Error).message})` : '') +
      `\nprometheus log:\n${prometheusLog.slice(-4000)}`,
  );
}

interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** Runs an instant query through Prometheus's HTTP API and returns the vector. */
async function query(expr: string): Promise<VectorSample[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data?: { resultType: string; result: VectorSample[] };
  };
  if (body.status !== 'success') throw new Error(`query ${expr}: ${body.error ?? res.status}`);
  if (body.data?.resultType !== 'vector') throw new Error(`query ${expr}: not a vector`);
  return body.data.result;
}

/** The single value of an instant query, or undefined while it has no result yet. */
async function scalarOf(expr: string): Promise<number | undefined> {
  const r = await query(expr);
  return r.length === 1 ? Number(r[0]!.value[1]) : undefined;
}

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  await ingestSmallDataset(db, ks, N);
  server = await startTestServer();
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });

  tmp = await mkdtemp(path.join(os.tmpdir(), 'sl-prometheus-'));
  const config = path.join(tmp, 'prometheus.yml');
  await writeFile(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      `  - job_name: ${JOB}`,
      '    scrape_interval: 1s',
      '    scrape_timeout: 1s',
      '    static_configs:',
      `      - targets: ['127.0.0.1:${server.metricsPort}']`,
      '',
    ].join('\n'),
  );
  const promPort = await freePort();
  promUrl = `http://127.0.0.1:${promPort}`;
  prometheus = spawn(
    toolPath('prometheus'),
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${path.join(tmp, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      // Debian's defaults point at /etc/prometheus: keep everything inside the temp folder.
      `--web.console.templates=${path.join(tmp, 'consoles')}`,
      `--web.console.libraries=${path.join(tmp, 'console_libraries')}`,
      '--storage.tsdb.retention.time=1h',
    ],
    { cwd: tmp, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  prometheus.stdout!.on('data', (d: Buffer) => (prometheusLog += d.toString()));
  prometheus.stderr!.on('data', (d: Buffer) => (prometheusLog += d.toString()));
  await waitFor('prometheus to be ready', async () => {
    const res = await fetch(`${promUrl}/-/ready`);
    return res.ok ? true : undefined;
  });
});

afterAll(async () => {
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise<void>((resolve) => prometheus!.once('exit', () => resolve()));
    prometheus.kill('SIGTERM');
    const killer = setTimeout(() => prometheus!.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  }
  client?.close();
  await server?.shutdown();
  if (db) {
    await dropKeyspace(db, ks);
    await db.shutdown();
  }
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe('a real Prometheus scraping the loader', () => {
  it('scrapes the loader and sees the samples, batches and latencies the client received', async () => {
    await waitFor('up{job="scylla-loader"} == 1', async () =>
      (await scalarOf(`up{job="${JOB}"}`)) === 1 ? true : undefined,
    );

    const sel = `{job="${JOB}"}`;
    let samples = 0;
    let batches = 0;
    let seen = 0;
    // Two epochs, the second after Prometheus has scraped the first: rate() over the
    // histogram then sees an increase (its series only appear with the first read).
    for (const seed of [1, 2]) {
      for await (const b of client.streamBatches({
        dataset: ks,
        split: 'all',
        batchSize: 32,
        seed,
      })) {
        samples += b.ids.length;
        batches++;
      }
      seen = await waitFor(`scylla_loader_samples_sent_total == ${samples}`, async () => {
        const v = await scalarOf(`scylla_loader_samples_sent_total${sel}`);
        return v === samples ? v : undefined;
      });
    }
    expect(samples).toBe(2 * N);
    expect(seen).toBe(samples);
    expect(await scalarOf(`scylla_loader_batches_sent_total${sel}`)).toBe(batches);
    expect(await scalarOf(`scylla_loader_sent_bytes_total${sel}`)).toBeGreaterThanOrEqual(
      samples * 100,
    );
    // One observation per database query: per sample, or per group of up to 32 ids when the
    // loader groups the reads of small samples (these are 100 bytes: `--group-reads auto`).
    expect(
      await scalarOf(`sum(scylla_loader_db_read_duration_seconds_count${sel})`),
    ).toBeGreaterThanOrEqual(Math.ceil(samples / 32));
    expect(await scalarOf(`sum(scylla_loader_batch_assembly_duration_seconds_count${sel})`)).toBe(
      batches,
    );
    // The streams have ended, and the process metrics come along with the loader's own.
    expect(await scalarOf(`scylla_loader_active_streams${sel}`)).toBe(0);
    expect(await scalarOf(`process_resident_memory_bytes${sel}`)).toBeGreaterThan(0);
    // A query the dashboard uses works on the real series: a p99 latency in seconds.
    const p99 = await waitFor('a p99 read latency', async () => {
      const v = await scalarOf(
        `histogram_quantile(0.99, sum by (le) (rate(scylla_loader_db_read_duration_seconds_bucket${sel}[1m])))`,
      );
      return v !== undefined && Number.isFinite(v) ? v : undefined;
    });
    expect(p99).toBeGreaterThan(0);
    expect(p99).toBeLessThanOrEqual(10);
  });

  it('promtool accepts the example scrape config in deploy/prometheus', async () => {
    const file = path.resolve('deploy/prometheus/prometheus.yml');
    const promtool = toolPath('promtool');
    const check = (f: string) =>
      run(promtool, ['check', 'config', f]).then(
        (r) => ({ code: 0, output: r.stdout + r.stderr }),
        (err: { code?: number; stdout?: string; stderr?: string }) => ({
          code: err.code ?? 1,
          output: `${err.stdout ?? ''}${err.stderr ?? ''}`,
        }),
      );
    const direct = await check(file);
    if (direct.code === 0) return;
    // Debian builds Prometheus without the Kubernetes service discovery, so its promtool
    // rejects `kubernetes_sd_configs` as an unknown field. Only in that case, check a copy with
    // the discovery block swapped for file_sd_configs: everything else (globals, job, every
    // relabel rule and its regex) is still checked by the real parser.
    expect(direct.output, 'promtool check config').toMatch(
      /field kubernetes_sd_configs not found in type config\.ScrapeConfig/,
    );
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(/kubernetes_sd_configs:\n\s+- role: pod\n/);
    const copy = path.join(tmp, 'example-file-sd.yml');
    await writeFile(
      copy,
      text.replace(
        /kubernetes_sd_configs:\n(\s+)- role: pod\n/,
        (_m, ind: string) => `file_sd_configs:\n${ind}- files: [targets.json]\n`,
      ),
    );
    const swapped = await check(copy);
    expect(swapped.output, 'promtool check config (kubernetes_sd swapped for file_sd)').toMatch(
      /SUCCESS/,
    );
    expect(swapped.code).toBe(0);
  });
});
