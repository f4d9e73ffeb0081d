import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import type cassandra from 'cassandra-driver';
import { service as healthService } from 'grpc-health-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ClientError, LoaderClient, type LoaderClientOptions } from '../../src/client/index.js';
import { createDbClient } from '../../src/core/index.js';
import { hashToken } from '../../src/testing/index.js';
import { newToken } from '../../src/testing/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { SERVE_ON_FREE_PORTS } from '../support/serveCli.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { collect, spawnCli } from '../support/runCli.js';
import { makeTestCa, type TestCa, type TestCert } from '../support/testCerts.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import { newReadyFile, waitForReadyFile } from '../support/readyFile.js';
import { startTestServer } from '../support/loaderServer.js';

const N = 240;
let db: cassandra.Client;
let dataset: string;
let other: string;
let ca: TestCa;
let otherCa: TestCa;
let serverCert: TestCert;
let clientCert: TestCert;
let strangerCert: TestCert;
const servers: LoaderServer[] = [];
const clients: LoaderClient[] = [];

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  dataset = uniqueKeyspace();
  other = uniqueKeyspace();
  // 4 KiB samples: with a 64 KiB client window a stream of them cannot be sent ahead at once.
  await ingestSmallDataset(db, dataset, N, 4, 4096);
  await ingestSmallDataset(db, other, 10);
  ca = makeTestCa('loader');
  otherCa = makeTestCa('other');
  serverCert = ca.issue('localhost', 'server');
  clientCert = ca.issue('trainer-a', 'client');
  strangerCert = otherCa.issue('trainer-a', 'client');
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.shutdown('test over')));
});

afterAll(async () => {
  for (const ks of [dataset, other]) if (ks) await dropKeyspace(db, ks);
  await db?.shutdown();
});

/** A loader of test/support that drops its streams at once on shutdown, closed after the test. */
async function startServer(overrides: Record<string, unknown>): Promise<LoaderServer> {
  const server = await startTestServer({ shutdownGraceMs: 0, ...overrides });
  servers.push(server);
  return server;
}

/** `scylla_loader_calls_refused_total` of a loader, as `"<rpc> <code>": count`. */
async function refusedCalls(server: LoaderServer): Promise<Record<string, number>> {
  const metric = await server.context.metrics.callsRefused.get();
  return Object.fromEntries(
    metric.values
      .filter((v) => v.value > 0)
      .map((v) => [`${String(v.labels.rpc)} ${String(v.labels.code)}`, v.value]),
  );
}

function client(port: number, options: LoaderClientOptions = {}): LoaderClient {
  const c = new LoaderClient(`localhost:${port}`, { reconnect: { attempts: 0 }, ...options });
  clients.push(c);
  return c;
}

const deadline = (): { deadline: number } => ({ deadline: Date.now() + 10_000 });

async function describeFails(c: LoaderClient): Promise<ClientError> {
  const err = await c.describeDataset(dataset, deadline()).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ClientError);
  return err as ClientError;
}

/** Fingerprint of the certificate a new TLS connection to the port is given. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({
      host: '127.0.0.1',
      port,
      servername: 'localhost',
      ca: readFileSync(ca.certFile),
      cert: clientCert.cert,
      key: clientCert.key,
      ALPNProtocols: ['h2'],
    });
    socket.once('secureConnect', () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.destroy();
    });
    socket.once('error', reject);
  });
}

async function eventually(cond: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(50);
  }
}

/** Writes `content` to `file` the way a Secret update does: whole, by rename. */
function replaceFile(file: string, content: Buffer | string): void {
  const tmp = `${file}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, content);
  renameSync(tmp, file);
}

describe('TLS on the gRPC port', () => {
  it('serves TLS clients that trust its CA and no one else', async () => {
    const server = await startServer({
      tls: { certFile: serverCert.certFile, keyFile: serverCert.keyFile },
    });
    const good = client(server.port, { tls: { ca: ca.certFile } });
    expect((await good.describeDataset(dataset, deadline())).sampleCount).toBe(N);

    const plain = await describeFails(client(server.port));
    expect(plain.codeName).toBe('UNAVAILABLE');
    const wrongCa = await describeFails(client(server.port, { tls: { ca: otherCa.certFile } }));
    expect(wrongCa.codeName).toBe('UNAVAILABLE');
    // A PEM given as text works as well as a path.
    const inline = client(server.port, { tls: { ca: readFileSync(ca.certFile, 'utf8') } });
    expect((await inline.describeDataset(dataset, deadline())).sampleCount).toBe(N);
  });

  it('with a client CA, refuses clients without a certificate or with one of another CA', async () => {
    const server = await startServer({
      tls: {
        certFile: serverCert.certFile,
        keyFile: serverCert.keyFile,
        clientCaFile: ca.certFile,
      },
    });
    const noCert = await describeFails(client(server.port, { tls: { ca: ca.certFile } }));
    expect(noCert.codeName).toBe('UNAVAILABLE');
    const stranger = await describeFails(
      client(server.port, {
        tls: { ca: ca.certFile, cert: strangerCert.certFile, key: strangerCert.keyFile },
      }),
    );
    expect(stranger.codeName).toBe('UNAVAILABLE');
    const trusted = client(server.port, {
      tls: { ca: ca.certFile, cert: clientCert.cert, key: clientCert.key },
    });
    expect((await trusted.describeDataset(dataset, deadline())).sampleCount).toBe(N);
  });

  it('picks up rotated files for new connections while an open stream runs on to its end', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sl-rotate-'));
    const certFile = path.join(dir, 'tls.crt');
    const keyFile = path.join(dir, 'tls.key');
    writeFileSync(certFile, serverCert.cert);
    writeFileSync(keyFile, serverCert.key);
    const server = await startServer({
      tls: { certFile, keyFile, clientCaFile: ca.certFile },
      reloadIntervalMs: 100,
    });
    const tls = { ca: ca.certFile, cert: clientCert.certFile, key: clientCert.keyFile };
    const before = new X509Certificate(serverCert.cert).fingerprint256;
    expect(await servedFingerprint(server.port)).toBe(before);

    // A small window and one buffered batch: the server cannot send the stream ahead.
    const streaming = client(server.port, {
      tls,
      flowControlWindow: 65_535,
      maxBufferedBatches: 1,
    });
    let reconnects = 0;
    const batches = streaming.streamBatches(
      { dataset, split: 'all', batchSize: 8, seed: 1, prefetch: 1 },
      { onReconnect: () => (reconnects += 1) },
    );
    const ids: string[] = [];
    const it = batches[Symbol.asyncIterator]();
    const first = await it.next();
    ids.push(...(first.value as { ids: string[] }).ids);

    // A half-written rotation (new certificate, old key) is not applied...
    const next = ca.issue('localhost', 'server');
    replaceFile(certFile, next.cert);
    await sleep(400);
    expect(await servedFingerprint(server.port)).toBe(before);
    // ...the complete one is, for new connections.
    replaceFile(keyFile, next.key);
    const after = new X509Certificate(next.cert).fingerprint256;
    await eventually(async () => (await servedFingerprint(server.port)) === after, 10_000);
    const fresh = client(server.port, { tls });
    expect((await fresh.describeDataset(dataset, deadline())).sampleCount).toBe(N);

    for (let r = await it.next(); !r.done; r = await it.next()) ids.push(...r.value.ids);
    expect(reconnects).toBe(0);
    expect(ids).toHaveLength(N);
    expect(new Set(ids).size).toBe(N);
  });

  it('stops the start naming a missing file or a key that does not match its certificate', async () => {
    const missing = path.join(os.tmpdir(), `sl-missing-${randomBytes(4).toString('hex')}.pem`);
    await expect(
      startServer({ tls: { certFile: missing, keyFile: serverCert.keyFile } }),
    ).rejects.toThrow(
      `cannot read the TLS certificate file ${missing} (--tls-cert, SCYLLA_LOADER_TLS_CERT): no such file`,
    );
    await expect(
      startServer({ tls: { certFile: serverCert.certFile, keyFile: clientCert.keyFile } }),
    ).rejects.toThrow(
      `TLS key file ${clientCert.keyFile} (--tls-key, SCYLLA_LOADER_TLS_KEY) does not match ` +
        `the certificate in ${serverCert.certFile}`,
    );
    await expect(
      startServer({ tls: { certFile: serverCert.keyFile, keyFile: serverCert.keyFile } }),
    ).rejects.toThrow(`TLS certificate file ${serverCert.keyFile} (--tls-cert`);
    await expect(startServer({ authTokensFile: missing })).rejects.toThrow(
      `cannot read the tokens file ${missing} (--auth-tokens, SCYLLA_LOADER_AUTH_TOKENS_FILE): no such file`,
    );
  });
});

describe('bearer tokens', () => {
  const reader = newToken();
  const admin = newToken();
  const outsider = newToken();
  let tokensFile: string;

  const entry = (name: string, token: string, role: string, datasets: string[]) => ({
    name,
    sha256: hashToken(token).toString('hex'),
    role,
    datasets,
  });

  beforeAll(() => {
    tokensFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'sl-tokens-')), 'tokens.json');
    writeFileSync(
      tokensFile,
      JSON.stringify({
        tokens: [
          entry('trainer-a', reader, 'reader', [dataset]),
          entry('ops', admin, 'admin', ['*']),
          entry('trainer-b', outsider, 'reader', [other]),
        ],
      }),
    );
  });

  it('lets each role make its calls on its datasets and refuses the others', async () => {
    const server = await startServer({ authTokensFile: tokensFile });
    const asReader = client(server.port, { token: reader });
    expect((await asReader.describeDataset(dataset, deadline())).sampleCount).toBe(N);
    expect(await asReader.listSplits(dataset, deadline())).toEqual([]);
    await expect(asReader.getSplit({ dataset, name: 'none' }, deadline())).rejects.toMatchObject({
      codeName: 'NOT_FOUND',
    });
    const stream = asReader.streamBatches({ dataset, split: 'all', batchSize: N, seed: 1 });
    let streamed = 0;
    for await (const b of stream) streamed += b.ids.length;
    expect(streamed).toBe(N);
    const split = { dataset, name: 'main', parts: { train: 3, test: 1 }, seed: 1 };
    await expect(asReader.createSplits(split, deadline())).rejects.toMatchObject({
      codeName: 'PERMISSION_DENIED',
      details:
        'token "trainer-a" has role reader, and CreateSplits needs role admin; ask for a token with that role',
    });

    // A token function is called per call (rotation); an admin may create splits anywhere.
    const asAdmin = client(server.port, { token: () => Promise.resolve(admin) });
    const made = await asAdmin.createSplits(split, deadline());
    expect(made.parts.map((p) => p.name).sort()).toEqual(['test', 'train']);
    expect((await asAdmin.describeDataset(other, deadline())).sampleCount).toBe(10);

    const asOutsider = client(server.port, { token: outsider });
    expect((await asOutsider.describeDataset(other, deadline())).sampleCount).toBe(10);
    for (const call of [
      () => asOutsider.describeDataset(dataset, deadline()),
      () => asOutsider.listSplits(dataset, deadline()),
      () => asOutsider.getSplit({ dataset, name: 'main' }, deadline()),
    ]) {
      await expect(call()).rejects.toMatchObject({
        codeName: 'PERMISSION_DENIED',
        details: expect.stringContaining(`token "trainer-b" may not use dataset "${dataset}"`),
      });
    }
    const denied = asOutsider.streamBatches({ dataset, split: 'all', batchSize: 8, seed: 1 });
    await expect(denied[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      codeName: 'PERMISSION_DENIED',
      details: expect.stringContaining('(StreamBatches)'),
    });
    // Every refusal is counted, by method and status; the calls that went through are not.
    expect(await refusedCalls(server)).toEqual({
      'CreateSplits PERMISSION_DENIED': 1,
      'DescribeDataset PERMISSION_DENIED': 1,
      'ListSplits PERMISSION_DENIED': 1,
      'GetSplit PERMISSION_DENIED': 1,
      'StreamBatches PERMISSION_DENIED': 1,
    });
  });

  it('answers a missing or unknown token with UNAUTHENTICATED, saying which, without the token', async () => {
    const server = await startServer({ authTokensFile: tokensFile });
    const none = await describeFails(client(server.port));
    expect(none).toMatchObject({ codeName: 'UNAUTHENTICATED' });
    expect(none.details).toMatch(/^no bearer token/);
    const guess = reader.slice(0, -1) + (reader.endsWith('A') ? 'B' : 'A');
    const wrong = await describeFails(client(server.port, { token: guess }));
    expect(wrong).toMatchObject({ codeName: 'UNAUTHENTICATED' });
    expect(wrong.details).toMatch(/^unknown token/);
    expect(wrong.message).not.toContain(guess.slice(4));
    const stream = client(server.port).streamBatches({
      dataset,
      split: 'all',
      batchSize: 8,
      seed: 1,
    });
    await expect(stream[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      codeName: 'UNAUTHENTICATED',
    });
    expect(await refusedCalls(server)).toEqual({
      'DescribeDataset UNAUTHENTICATED': 2,
      'StreamBatches UNAUTHENTICATED': 1,
    });
  });

  it('leaves health open and puts reflection behind any valid token', async () => {
    const server = await startServer({ authTokensFile: tokensFile });
    const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
    const health = new Health(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    const status = await new Promise<unknown>((resolve, reject) =>
      (
        health as unknown as { Check: (r: object, cb: (e: unknown, r: unknown) => void) => void }
      ).Check({ service: '' }, (e, r) => (e ? reject(e as Error) : resolve(r))),
    );
    health.close();
    expect(status).toMatchObject({ status: 'SERVING' });

    expect(await listServices(server.port)).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    const listed = await listServices(server.port, outsider);
    expect(listed.code).toBe(grpc.status.OK);
    expect(listed.body).toContain('scylla_loader.v1.LoaderService');
  });

  it('reads the tokens file again when it changes, keeping the last good one over a bad one', async () => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'sl-tokens-')), 'tokens.json');
    writeFileSync(file, JSON.stringify({ tokens: [entry('trainer-a', reader, 'reader', ['*'])] }));
    const server = await startServer({ authTokensFile: file, reloadIntervalMs: 100 });
    const asAdmin = client(server.port, { token: admin });
    expect((await describeFails(asAdmin)).codeName).toBe('UNAUTHENTICATED');

    const healthz = async (): Promise<{ status: number; text: string }> => {
      const res = await fetch(`http://127.0.0.1:${server.metricsPort}/healthz`);
      return { status: res.status, text: await res.text() };
    };
    const metric = async (name: string): Promise<string | undefined> => {
      const text = await (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
      return new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
    };
    expect((await healthz()).text).not.toMatch(/tokens file/);
    expect(await metric('scylla_loader_auth_tokens_file_stale')).toBe('0');

    replaceFile(file, '{"tokens": [ not json');
    await sleep(400);
    const asReader = client(server.port, { token: reader });
    expect((await asReader.describeDataset(dataset, deadline())).sampleCount).toBe(N);
    // Stale tokens are a line on /healthz and a gauge, not a reason to stop serving.
    const stale = await healthz();
    expect(stale.status).toBe(200);
    expect(stale.text).toMatch(/^ok\n/);
    expect(stale.text).toMatch(
      /\ntokens file stale since \S+: tokens file \S+ is not valid JSON.*; the tokens read at \S+ stay in force\n/,
    );
    expect(await metric('scylla_loader_auth_tokens_file_stale')).toBe('1');
    const failures = Number(await metric('scylla_loader_auth_tokens_reload_failures_total'));
    expect(failures).toBeGreaterThan(0);

    replaceFile(file, JSON.stringify({ tokens: [entry('ops', admin, 'admin', ['*'])] }));
    await eventually(
      () =>
        asAdmin.describeDataset(dataset, deadline()).then(
          () => true,
          () => false,
        ),
      10_000,
    );
    expect((await describeFails(asReader)).codeName).toBe('UNAUTHENTICATED');
    expect((await healthz()).text).not.toMatch(/tokens file/);
    expect(await metric('scylla_loader_auth_tokens_file_stale')).toBe('0');
  });
});

/** Calls reflection's ListServices with a raw request (`list_services: "*"`). */
function listServices(port: number, token?: string): Promise<{ code: number; body: string }> {
  const method = {
    path: '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
    requestStream: true,
    responseStream: true,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  };
  const c = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (token) metadata.set('authorization', `Bearer ${token}`);
  const call = c.makeBidiStreamRequest<Buffer, Buffer>(
    method.path,
    method.requestSerialize,
    method.responseDeserialize,
    metadata,
  );
  let body = '';
  call.on('data', (b: Buffer) => {
    body += b.toString('latin1');
    call.end();
  });
  call.write(Buffer.from([0x3a, 0x01, 0x2a]));
  return new Promise((resolve) => {
    call.on('error', (e: grpc.ServiceError) => {
      c.close();
      resolve({ code: e.code, body });
    });
    call.on('status', (s: grpc.StatusObject) => {
      if (s.code === grpc.status.OK) {
        c.close();
        resolve({ code: s.code, body });
      }
    });
  });
}

describe('serve (CLI) with every secret set', () => {
  it('keeps tokens, keys, the resume key and the database password out of logs, errors, config and metrics', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sl-secrets-'));
    const reader = newToken();
    const admin = newToken();
    const wrong = newToken();
    const tokensFile = path.join(dir, 'tokens.json');
    writeFileSync(
      tokensFile,
      JSON.stringify({
        tokens: [
          {
            name: 'trainer-a',
            sha256: hashToken(reader).toString('hex'),
            role: 'reader',
            datasets: [dataset],
          },
          { name: 'ops', sha256: hashToken(admin).toString('hex'), role: 'admin', datasets: ['*'] },
        ],
      }),
    );
    const resumeKey = randomBytes(32).toString('hex');
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const cfg = testDbConfig();
    const env = {
      ...dbEnv(cfg),
      SCYLLA_LOADER_RESUME_KEY: resumeKey,
      SCYLLA_LOADER_DB_USERNAME: 'loader',
      SCYLLA_LOADER_DB_PASSWORD: password,
      SCYLLA_LOADER_TLS_CERT: serverCert.certFile,
      SCYLLA_LOADER_TLS_KEY: serverCert.keyFile,
      SCYLLA_LOADER_TLS_CLIENT_CA: ca.certFile,
      SCYLLA_LOADER_AUTH_TOKENS_FILE: tokensFile,
      SCYLLA_LOADER_LOG_LEVEL: 'debug',
    };
    // Every base64 line of the private keys, so a key printed in any PEM form is found.
    const keyLines = [serverCert.key, clientCert.key]
      .flatMap((k) => k.toString().split('\n'))
      .filter((l) => l.length > 20 && !l.startsWith('-----'));
    const secrets = [reader, admin, wrong, resumeKey, password, ...keyLines];

    const readyFile = newReadyFile();
    const child = spawnCli([...SERVE_ON_FREE_PORTS], {
      ...env,
      SCYLLA_LOADER_READY_FILE: readyFile,
    });
    const done = collect(child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const ready = await waitForReadyFile(child, readyFile);
    const lines = out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const config = lines.find((l) => l['msg'] === 'serve configuration')!['config'];
    expect(config).toMatchObject({
      tls: {
        certFile: serverCert.certFile,
        keyFile: serverCert.keyFile,
        clientCaFile: ca.certFile,
      },
      authTokensFile: tokensFile,
      resumeKey: '(redacted)',
      db: { password: '(redacted)' },
    });
    const { port, metricsPort } = ready;

    const tls = { ca: ca.certFile, cert: clientCert.certFile, key: clientCert.keyFile };
    const errors: string[] = [];
    const record = (e: unknown): void => {
      errors.push(String(e), (e as Error).stack ?? '', JSON.stringify(e));
    };
    const asReader = client(port, { tls, token: reader });
    expect((await asReader.describeDataset(dataset, deadline())).sampleCount).toBe(N);
    for await (const b of asReader.streamBatches({
      dataset,
      split: 'all',
      batchSize: N,
      seed: 2,
    })) {
      expect(b.ids).toHaveLength(N);
    }
    await asReader
      .createSplits({ dataset, name: 's', parts: { a: 1, b: 1 } }, deadline())
      .then(() => expect.fail('a reader created splits'), record);
    await client(port, { tls, token: wrong })
      .describeDataset(dataset, deadline())
      .then(() => expect.fail('a wrong token was accepted'), record);
    await client(port, { tls, token: admin })
      .describeDataset('no_such_ds', deadline())
      .then(() => expect.fail('an unknown dataset was described'), record);
    expect(errors.join('\n')).toMatch(/PERMISSION_DENIED[\s\S]*UNAUTHENTICATED[\s\S]*NOT_FOUND/);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain('scylla_loader_');

    child.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(0);

    // A start that fails on a key not matching its certificate prints an error, not the key.
    const failed = await collect(
      spawnCli(['serve', '--grpc-port', '0', '--metrics-port', '0'], {
        ...env,
        SCYLLA_LOADER_TLS_KEY: clientCert.keyFile,
      }),
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`TLS key file ${clientCert.keyFile} (--tls-key`);

    const captured = [
      result.stdout,
      result.stderr,
      failed.stdout,
      failed.stderr,
      metrics,
      ...errors,
    ];
    for (const secret of secrets) {
      for (const text of captured) expect(text.includes(secret), `secret found`).toBe(false);
    }
    // The captured output is real: it holds the token names and files, which are no secret.
    expect(result.stdout).toContain('"token":"trainer-a"');
  });
});
