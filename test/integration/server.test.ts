import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type cassandra from 'cassandra-driver';
import { service as healthService } from 'grpc-health-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StreamBatchesRequest, StreamBatchesRequest__Output } from '../../src/proto/index.js';
import type {
  StreamBatchesResponse,
  StreamBatchesResponse__Output,
} from '../../src/proto/index.js';
import { loadLoaderProto } from '../../src/testing/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { newReadyFile, waitForReadyFile } from '../support/readyFile.js';
import {
  LOADER_SERVICE_NAME,
  type LoaderServer,
  type LoaderServerOptions,
} from '../../src/server/index.js';
import { createDbClient, ingestDataset, readImageFolder } from '../../src/core/index.js';
import { writeJpegs } from '../support/fixtures.js';
import { collect, spawnCli } from '../support/runCli.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

type Held = grpc.ServerWritableStream<StreamBatchesRequest__Output, StreamBatchesResponse>;
type BatchStream = grpc.ClientReadableStream<StreamBatchesResponse__Output>;

let db: cassandra.Client;
let dataset: string;
let datasetBytes: number;
const servers: LoaderServer[] = [];
const clients: grpc.Client[] = [];

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  const root = path.join(await mkdtemp(path.join(os.tmpdir(), 'sl-server-')), 'images');
  await writeJpegs(path.join(root, 'cat'), 3);
  await writeJpegs(path.join(root, 'dog'), 4);
  dataset = uniqueKeyspace();
  const summary = await ingestDataset(db, {
    dataset,
    source: await readImageFolder(root),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 4,
    strict: true,
  });
  datasetBytes = summary.dataset.totalBytes;
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.shutdown('test over')));
});

afterAll(async () => {
  if (dataset) await dropKeyspace(db, dataset);
  await db?.shutdown();
});

/** A loader of test/support (free ports, the test database), shut down after the test. */
async function startServer(
  overrides: Record<string, unknown> = {},
  opts: LoaderServerOptions = {},
): Promise<LoaderServer> {
  const server = await startTestServer(overrides, opts);
  servers.push(server);
  return server;
}

function track<C extends grpc.Client>(client: C): C {
  clients.push(client);
  return client;
}

function loaderClient(port: number) {
  const Client = loadLoaderProto().scylla_loader.v1.LoaderService;
  return track(new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure()));
}

interface HealthClient extends grpc.Client {
  Check(
    req: { service: string },
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: { status: string }) => void,
  ): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<{ status: string }>;
}

function healthClient(port: number): HealthClient {
  const Client = grpc.makeGenericClientConstructor(healthService, 'Health');
  const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return track(client) as unknown as HealthClient;
}

function check(client: HealthClient, service: string): Promise<string> {
  return new Promise((resolve, reject) =>
    client.Check({ service }, { deadline: Date.now() + 5_000 }, (err, res) =>
      err ? reject(err) : resolve(res!.status),
    ),
  );
}

function describeDataset(port: number, name: string) {
  const client = loaderClient(port);
  return new Promise<Record<string, unknown>>((resolve, reject) =>
    client.DescribeDataset({ dataset: name }, (err, res) =>
      err ? reject(err) : resolve(res as unknown as Record<string, unknown>),
    ),
  );
}

/** Opens a stream and resolves once its first batch arrived, i.e. it was admitted. */
async function openAdmitted(port: number, req: StreamBatchesRequest): Promise<BatchStream> {
  const stream = loaderClient(port).StreamBatches(req);
  await new Promise<void>((resolve, reject) => {
    stream.once('data', () => resolve());
    stream.once('error', reject);
  });
  return stream;
}

/** The status a stream ends with: OK, or the error's code and details. */
function finalStatus(stream: BatchStream): Promise<{ code: number; details: string }> {
  return new Promise((resolve) => {
    stream.on('data', () => undefined);
    stream.on('error', () => undefined);
    stream.once('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details }));
  });
}

/**
 * A StreamBatches handler that sends one empty batch and then holds the stream until the test
 * ends it (or the call is cancelled), so tests control how long streams stay open.
 */
function holdingHandler() {
  const held: Held[] = [];
  const cancelled: Held[] = [];
  const factory = () => (call: Held) => {
    held.push(call);
    call.once('cancelled', () => cancelled.push(call));
    call.write({ batch: { epoch: 0, index: held.length - 1 } });
  };
  return { held, cancelled, factory };
}

async function metricValue(
  server: LoaderServer,
  name: 'activeStreams' | 'streamErrors',
  code?: string,
): Promise<number> {
  const { values } = await server.context.metrics[name].get();
  const v = values.find((x) => code === undefined || x.labels['code'] === code);
  return v?.value ?? 0;
}

async function eventually(cond: () => Promise<boolean> | boolean, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(20);
  }
}

describe('loader server', () => {
  it('answers the standard health check: SERVING overall and for the loader service', async () => {
    const server = await startServer();
    const health = healthClient(server.port);
    expect(await check(health, '')).toBe('SERVING');
    expect(await check(health, LOADER_SERVICE_NAME)).toBe('SERVING');
    await expect(check(health, 'no.such.Service')).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
    });
  });

  it('lists the loader and health services through server reflection', async () => {
    const server = await startServer();
    const require = createRequire(import.meta.url);
    const protoDir = path.join(
      path.dirname(require.resolve('@grpc/reflection/package.json')),
      'build/proto',
    );
    const def = protoLoader.loadSync('grpc/reflection/v1/reflection.proto', {
      includeDirs: [protoDir],
      keepCase: true,
      defaults: true,
      oneofs: true,
    });
    const pkg = grpc.loadPackageDefinition(def) as unknown as {
      grpc: { reflection: { v1: { ServerReflection: grpc.ServiceClientConstructor } } };
    };
    const client = track(
      new pkg.grpc.reflection.v1.ServerReflection(
        `127.0.0.1:${server.port}`,
        grpc.credentials.createInsecure(),
      ),
    );
    const call = (
      client as unknown as { ServerReflectionInfo(): grpc.ClientDuplexStream<unknown, unknown> }
    ).ServerReflectionInfo();
    const names = await new Promise<string[]>((resolve, reject) => {
      call.once('data', (res: { list_services_response?: { service: { name: string }[] } }) =>
        resolve((res.list_services_response?.service ?? []).map((s) => s.name)),
      );
      call.once('error', reject);
      call.write({ list_services: '' });
    });
    call.end();
    expect(names).toContain(LOADER_SERVICE_NAME);
    expect(names).toContain('grpc.health.v1.Health');
  });

  it('describes an ingested dataset, NOT_FOUND for an unknown one, INVALID_ARGUMENT for a bad name', async () => {
    const server = await startServer();
    const res = await describeDataset(server.port, dataset);
    expect(res).toMatchObject({
      dataset,
      sampleCount: '7',
      totalBytes: String(datasetBytes),
      labelNames: ['cat', 'dog'],
      classCounts: { 0: '3', 1: '4' },
      splits: ['all'],
    });
    expect(datasetBytes).toBeGreaterThan(0);

    const unknown = uniqueKeyspace();
    await expect(describeDataset(server.port, unknown)).rejects.toMatchObject({
      code: grpc.status.NOT_FOUND,
      details: `dataset "${unknown}" does not exist; ingest it first`,
    });
    await expect(describeDataset(server.port, 'Bad-Name; DROP')).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/^invalid dataset name "Bad-Name; DROP"/),
    });
    await expect(describeDataset(server.port, 'system_auth')).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
    });
  });

  it('admits maxConcurrentStreams streams and refuses one more with RESOURCE_EXHAUSTED', async () => {
    const handler = holdingHandler();
    const server = await startServer(
      { maxConcurrentStreams: 1 },
      { streamBatchesHandler: handler.factory },
    );
    const first = await openAdmitted(server.port, { dataset });
    expect(await metricValue(server, 'activeStreams')).toBe(1);

    const second = loaderClient(server.port).StreamBatches({ dataset });
    expect(await finalStatus(second)).toEqual({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'loader at its limit of 1 concurrent streams; retry later or add replicas',
    });
    expect(handler.held).toHaveLength(1); // the refused call never reached the handler
    expect(await metricValue(server, 'streamErrors', 'RESOURCE_EXHAUSTED')).toBe(1);

    // A cancelled stream frees its slot, and the handler hears of the cancel.
    first.on('error', () => undefined);
    first.cancel();
    await eventually(async () => (await metricValue(server, 'activeStreams')) === 0);
    expect(handler.cancelled).toEqual([handler.held[0]]);
    expect(await metricValue(server, 'streamErrors', 'CANCELLED')).toBe(1);
    const third = await openAdmitted(server.port, { dataset });
    expect(handler.held).toHaveLength(2);
    third.cancel();
  });

  it('admits the real StreamBatches handler under the same limit', async () => {
    const server = await startServer({ maxConcurrentStreams: 1 });
    const req = { dataset, split: 'all', batchSize: 1, epochs: 1000, prefetch: 1 };
    const first = await openAdmitted(server.port, req);
    first.pause(); // a slow trainer: the stream stays open
    const second = loaderClient(server.port).StreamBatches(req);
    expect(await finalStatus(second)).toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    first.on('error', () => undefined);
    first.cancel();
    await eventually(async () => (await metricValue(server, 'activeStreams')) === 0);
  });

  it('serves /metrics that promtool accepts, and /healthz', async () => {
    const server = await startServer();
    await describeDataset(server.port, dataset);
    const res = await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(server.context.metrics.registry.contentType);
    const text = await res.text();
    expect(text).toMatch(/^scylla_loader_active_streams 0$/m);
    expect(text).toContain('# TYPE scylla_loader_db_read_duration_seconds histogram');
    expect(text).toContain('process_cpu_seconds_total');

    const promtool = await runPromtool(text);
    expect(promtool.output, 'promtool check metrics').toBe('');
    expect(promtool.code).toBe(0);

    const healthz = await fetch(`http://127.0.0.1:${server.metricsPort}/healthz`);
    // `ok`, then how this loader decodes transforms (the native module is built by set-up).
    expect(healthz.status).toBe(200);
    expect(await healthz.text()).toMatch(
      /^ok\ntransforms: native for JPEG and 8-bit PNG \(.*\.node\), sharp for the rest\n$/,
    );
    expect((await fetch(`http://127.0.0.1:${server.metricsPort}/nope`)).status).toBe(404);
  });
});

describe('shutdown', () => {
  it('goes NOT_SERVING, refuses new calls, lets open streams finish, then closes', async () => {
    const handler = holdingHandler();
    const server = await startServer(
      { shutdownGraceMs: 20_000 },
      { streamBatchesHandler: handler.factory },
    );
    const watch = healthClient(server.port).Watch({ service: '' });
    const statuses: string[] = [];
    watch.on('data', (m: { status: string }) => statuses.push(m.status));
    watch.on('error', () => undefined);
    await eventually(() => statuses.includes('SERVING'));
    const stream = await openAdmitted(server.port, { dataset });
    const streamEnd = finalStatus(stream);

    const started = Date.now();
    const stopped = server.shutdown('test');
    await eventually(() => statuses.includes('NOT_SERVING'));
    watch.cancel();
    const healthz = await fetch(`http://127.0.0.1:${server.metricsPort}/healthz`);
    expect(healthz.status).toBe(503);
    // New connections are refused while the open stream runs on.
    await expect(check(healthClient(server.port), '')).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
    await expect(describeDataset(server.port, dataset)).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });

    handler.held[0]!.end();
    expect(await streamEnd).toMatchObject({ code: grpc.status.OK });
    await stopped;
    expect(Date.now() - started).toBeLessThan(10_000); // did not sit out the grace period
    await expect(fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).rejects.toThrow();
    await expect(
      server.context.paths[0]!.client.execute('SELECT release_version FROM system.local'),
    ).rejects.toThrow();
    expect(await metricValue(server, 'streamErrors')).toBe(0);
  });

  it('ends streams still open after the grace period with UNAVAILABLE', async () => {
    const handler = holdingHandler();
    const server = await startServer(
      { shutdownGraceMs: 300 },
      { streamBatchesHandler: handler.factory },
    );
    const stream = await openAdmitted(server.port, { dataset });
    const streamEnd = finalStatus(stream);
    const started = Date.now();
    await server.shutdown('test');
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(await streamEnd).toEqual({
      code: grpc.status.UNAVAILABLE,
      details: 'loader shutting down; resume with the last resume token',
    });
    // The handler was told to stop, as on a client's cancel.
    expect(handler.cancelled).toEqual(handler.held);
    expect(handler.held[0]!.cancelled).toBe(true);
    expect(await metricValue(server, 'streamErrors', 'UNAVAILABLE')).toBe(1);
    expect(await metricValue(server, 'activeStreams')).toBe(0);
    await expect(check(healthClient(server.port), '')).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
  });

  it('ends a real StreamBatches stream with UNAVAILABLE after the grace period', async () => {
    const server = await startServer({ shutdownGraceMs: 300 });
    const req = { dataset, split: 'all', batchSize: 2, epochs: 100_000 };
    const stream = await openAdmitted(server.port, req);
    const streamEnd = finalStatus(stream); // keeps reading: the stream would go on for long
    await server.shutdown('test');
    expect(await streamEnd).toEqual({
      code: grpc.status.UNAVAILABLE,
      details: 'loader shutting down; resume with the last resume token',
    });
  });
});

describe('serve (CLI)', () => {
  const cliEnv = (): NodeJS.ProcessEnv => {
    const cfg = testDbConfig();
    return {
      ...dbEnv(cfg),
    };
  };

  it('serves until SIGTERM, logs its configuration without the key, and exits 0', async () => {
    const key = randomBytes(32).toString('hex');
    const readyFile = newReadyFile();
    const child = spawnCli(
      [
        'serve',
        '--host',
        '127.0.0.1',
        '--grpc-port',
        '0',
        '--metrics-port',
        '0',
        '--max-streams',
        '3',
        '--ready-file',
        readyFile,
      ],
      { ...cliEnv(), SCYLLA_LOADER_RESUME_KEY: key, SCYLLA_LOADER_LOG_LEVEL: 'info' },
    );
    const done = collect(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const ready = await waitForReadyFile(child, readyFile);
    expect(ready.pid).toEqual(expect.any(Number));
    expect(ready.metricsPort).toBeGreaterThan(0);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const config = lines.find((l) => l['msg'] === 'serve configuration')!['config'] as Record<
      string,
      unknown
    >;
    expect(config).toMatchObject({ maxConcurrentStreams: 3, resumeKey: '(redacted)' });
    const { workers } = lines.find((l) => l['msg'] === 'serve configuration') as {
      workers: number;
    };
    expect(ready.workers).toBe(workers);
    const { port } = lines.find((l) => l['msg'] === 'loader serving') as { port: number };
    expect(ready.port).toBe(port);
    expect(await check(healthClient(port), '')).toBe('SERVING');

    child.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(0);
    // Not ready any more: the file is gone with the loader.
    expect(existsSync(readyFile)).toBe(false);
    expect(result.stdout).not.toContain(key);
    expect(result.stdout).toContain('"msg":"loader stopped"');
  });

  it('refuses invalid settings by flag and environment variable name', async () => {
    const bad = await collect(spawnCli(['serve', '--max-streams', '0'], cliEnv()));
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^error: invalid serve configuration\n {2}--max-streams \(SCYLLA_LOADER_MAX_STREAMS\): /,
    );
    const badKey = await collect(
      spawnCli(['serve'], { ...cliEnv(), SCYLLA_LOADER_RESUME_KEY: 'too-short' }),
    );
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/^error: SCYLLA_LOADER_RESUME_KEY must be at least 32 bytes/);
    for (const r of [bad, badKey]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

/** Runs `promtool check metrics` on a scrape; fails the test with a hint when it is missing. */
function runPromtool(text: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('promtool', ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new Error(
              'promtool not found: run scripts/setup.sh (installs Debian package prometheus)',
            )
          : err,
      ),
    );
    child.on('close', (code) => resolve({ code, output }));
    child.stdin.end(text);
  });
}
