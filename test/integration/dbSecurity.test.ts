import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LoaderClient } from '../../src/client/index.js';
import { findJava } from '../../src/testing/index.js';
import { type LocalCluster, startLocalCluster } from '../../src/devdb/index.js';
import { stopLocalCluster } from '../../src/devdb/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { SERVE_ON_FREE_PORTS } from '../support/serveCli.js';
import { collect, runCli, spawnCli, type CliResult } from '../support/runCli.js';
import { newReadyFile, waitForReadyFile } from '../support/readyFile.js';
import { makeTestCa, type TestCa } from '../support/testCerts.js';

// A node of its own with password authentication and TLS-only CQL that requires client
// certificates, on its own address next to the shared plaintext node (which keeps 127.0.0.1).
// One start for the whole file.
const ADDRESS = '127.0.0.31';
const DATASET = 'sec_tls_auth';
const SAMPLES = 60;

let stateDir: string;
let cluster: LocalCluster;
let password: string;
let wrongCaFile: string;
let baseEnv: NodeJS.ProcessEnv;
let otherCa: TestCa | undefined;

/** No stack trace: user errors are one `error:` line, not `at file:line` frames. */
const STACK_FRAME = /^\s+at .+[:(]/m;

beforeAll(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'sl-dbsec-'));
  const [started] = await Promise.all([
    startLocalCluster({
      stateDir: path.join(stateDir, 'db'),
      firstAddress: ADDRESS,
      clusterName: 'scylla-loader-security-test',
      heapMb: 512,
      auth: true,
      tls: true,
      tlsClientAuth: true,
      timeoutMs: 240_000,
      log: (line) => console.log(`[sec-db] ${line}`),
    }),
    makeUnrelatedCa(path.join(stateDir, 'other-ca')).then((f) => (wrongCaFile = f)),
  ]);
  cluster = started;
  if (!cluster.auth || !cluster.tls?.clientCertFile || !cluster.tls.clientKeyFile) {
    throw new Error('the cluster did not report auth, TLS and a client certificate');
  }
  otherCa = makeTestCa('db-other');
  password = (await readFile(cluster.auth.passwordFile, 'utf8')).trim();
  baseEnv = {
    ...dbEnv(cluster),
    SCYLLA_LOADER_DB_USERNAME: cluster.auth.username,
    SCYLLA_LOADER_DB_TLS_CA: cluster.tls.caFile,
    SCYLLA_LOADER_DB_TLS_CERT: cluster.tls.clientCertFile,
    SCYLLA_LOADER_DB_TLS_KEY: cluster.tls.clientKeyFile,
    // Set by the shell of whoever runs the tests, they would mix in.
    SCYLLA_LOADER_DB_PASSWORD: '',
    SCYLLA_LOADER_DB_PASSWORD_FILE: '',
    SCYLLA_LOADER_DB_TLS: '',
    SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME: '',
  };
});

afterAll(async () => {
  if (otherCa) await rm(otherCa.dir, { recursive: true, force: true });
  if (!stateDir) return;
  await stopLocalCluster(path.join(stateDir, 'db'));
  await rm(stateDir, { recursive: true, force: true });
});

describe('the database with password authentication, TLS only and client certificates', () => {
  it('db start --auth --tls --tls-client-auth made a random password, a PEM CA and a client certificate', async () => {
    expect(password).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    expect(await readFile(cluster.tls!.caFile, 'utf8')).toContain('-----BEGIN CERTIFICATE-----');
    expect(await readFile(cluster.tls!.clientCertFile!, 'utf8')).toContain(
      '-----BEGIN CERTIFICATE-----',
    );
    expect(await readFile(cluster.tls!.clientKeyFile!, 'utf8')).toContain('PRIVATE KEY-----');
    // A second start reuses the node and reports the same access settings.
    const again = await runCli(['db', 'start', '--state-dir', path.join(stateDir, 'db')]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`SCYLLA_LOADER_DB_TLS_CA=${cluster.tls!.caFile}`);
    expect(again.stdout).toContain(`SCYLLA_LOADER_DB_TLS_CERT=${cluster.tls!.clientCertFile}`);
    expect(again.stdout).toContain(`SCYLLA_LOADER_DB_TLS_KEY=${cluster.tls!.clientKeyFile}`);
    expect(again.stdout).toContain(`SCYLLA_LOADER_DB_PASSWORD_FILE=${cluster.auth!.passwordFile}`);
    expect(again.stdout).not.toContain(password);
  });

  it('ingests (password from a file) and streams every sample (password in the environment), never printing the password', async () => {
    const manifest = await writeSmallManifest(path.join(stateDir, 'data'));
    const ingest = await runCli(['ingest', DATASET, '--manifest', manifest], {
      ...baseEnv,
      SCYLLA_LOADER_DB_PASSWORD_FILE: cluster.auth!.passwordFile,
    });
    expect(ingest.stderr).not.toMatch(STACK_FRAME);
    expect(ingest.code).toBe(0);
    expect(ingest.stdout).toContain(`${SAMPLES} samples`);

    const { ids, result } = await streamOnce({ SCYLLA_LOADER_DB_PASSWORD: password });
    expect(ids).toHaveLength(SAMPLES);
    expect(new Set(ids).size).toBe(SAMPLES);
    const all = `${result.stdout}${result.stderr}`;
    // The configuration line was printed, with the password replaced.
    expect(all).toContain('serve configuration');
    expect(all).toContain('(redacted)');
    expect(all).not.toContain(password);
  });

  it('serve stops at start, naming the password settings, when the password is wrong', async () => {
    const wrong = `wrong-${password.slice(0, 6)}-pw`;
    const r = await serveOnce({ SCYLLA_LOADER_DB_PASSWORD: wrong });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('refused the credentials of user "loader"');
    expect(r.stderr).toContain('SCYLLA_LOADER_DB_PASSWORD');
    expectNoSecretNoStack(r, [wrong, password]);
  });

  it('serve stops at start, naming --db-tls-ca, when the CA is not the one that signed the node', async () => {
    await expectServeStops(
      { SCYLLA_LOADER_DB_PASSWORD: password, SCYLLA_LOADER_DB_TLS_CA: wrongCaFile },
      'is not signed by the CA in',
      '--db-tls-ca (SCYLLA_LOADER_DB_TLS_CA)',
    );
  });

  it('serve stops at start, naming --db-tls, when TLS is off against the TLS-only node', async () => {
    await expectServeStops(
      {
        SCYLLA_LOADER_DB_PASSWORD_FILE: cluster.auth!.passwordFile,
        // Each of these alone turns TLS on.
        SCYLLA_LOADER_DB_TLS_CA: '',
        SCYLLA_LOADER_DB_TLS_CERT: '',
        SCYLLA_LOADER_DB_TLS_KEY: '',
      },
      'requires TLS',
      '--db-tls (SCYLLA_LOADER_DB_TLS=true)',
    );
  });

  it.each([
    ['without a client certificate', () => ({ cert: '', key: '' })],
    [
      'with a client certificate of another CA',
      () => {
        const stranger = otherCa!.issue('loader', 'client');
        return { cert: stranger.certFile, key: stranger.keyFile };
      },
    ],
  ])('serve stops at start, naming --db-tls-cert, %s', async (_case, presented) => {
    const { cert, key } = presented();
    await expectServeStops(
      {
        SCYLLA_LOADER_DB_PASSWORD: password,
        SCYLLA_LOADER_DB_TLS_CERT: cert,
        SCYLLA_LOADER_DB_TLS_KEY: key,
      },
      "the database refused the loader's client certificate",
      '--db-tls-cert (SCYLLA_LOADER_DB_TLS_CERT)',
    );
  });

  it('refuses a node reached at an address its certificate does not name, unless host-name checks are off', async () => {
    // The same node through another address (as through a NAT or a load balancer): the bytes
    // pass untouched, the certificate names 127.0.0.31 and localhost, not 127.0.0.32.
    const forward = net.createServer((socket) => {
      const upstream = net.connect(cluster.port, ADDRESS);
      socket.pipe(upstream).pipe(socket);
      const end = (): void => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
    });
    await new Promise<void>((resolve, reject) => {
      forward.once('error', reject);
      forward.listen(cluster.port, '127.0.0.32', () => resolve());
    });
    try {
      const viaOther = {
        SCYLLA_LOADER_CONTACT_POINTS: '127.0.0.32',
        SCYLLA_LOADER_DB_PASSWORD: password,
      };
      await expectServeStops(
        viaOther,
        'does not name the address it was reached at',
        '--db-tls-no-verify-hostname',
      );

      const { ids } = await streamOnce({
        ...viaOther,
        SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME: 'false',
      });
      expect(ids).toHaveLength(SAMPLES);
      expect(new Set(ids).size).toBe(SAMPLES);
    } finally {
      forward.close();
    }
  });

  it('a command without credentials is told which settings to set', async () => {
    const r = await runCli(['describe', DATASET], {
      ...baseEnv,
      SCYLLA_LOADER_DB_USERNAME: '',
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('the database requires a password: set SCYLLA_LOADER_DB_USERNAME');
    expect(r.stderr).not.toMatch(STACK_FRAME);
  });
});

/** Serves with `env` and streams one epoch of the dataset: the ids received, serve's output. */
async function streamOnce(env: NodeJS.ProcessEnv): Promise<{ ids: string[]; result: CliResult }> {
  const readyFile = newReadyFile();
  const serve = spawnCli([...SERVE_ON_FREE_PORTS], {
    ...baseEnv,
    SCYLLA_LOADER_LOG_LEVEL: 'info',
    SCYLLA_LOADER_READY_FILE: readyFile,
    ...env,
  });
  const output = collect(serve);
  const ids: string[] = [];
  try {
    const { port } = await waitForReadyFile(serve, readyFile);
    const client = new LoaderClient(`127.0.0.1:${port}`);
    try {
      for await (const batch of client.streamBatches({
        dataset: DATASET,
        split: 'all',
        batchSize: 16,
        seed: 4,
        epochs: 1,
      })) {
        ids.push(...batch.ids);
      }
    } finally {
      client.close();
    }
  } finally {
    serve.kill('SIGTERM');
  }
  return { ids, result: await output };
}

/** Runs `serve` expecting it to stop on its own at start; kills it if it serves instead. */
async function serveOnce(env: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawnCli([...SERVE_ON_FREE_PORTS], {
    ...baseEnv,
    SCYLLA_LOADER_LOG_LEVEL: 'info',
    ...env,
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    return await collect(child);
  } finally {
    clearTimeout(timer);
  }
}

/** `serve` with `env` stops at start saying `reason` and naming `setting`, with no secret nor stack. */
async function expectServeStops(env: NodeJS.ProcessEnv, reason: string, setting: string) {
  const r = await serveOnce(env);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain(reason);
  expect(r.stderr).toContain(setting);
  expectNoSecretNoStack(r, [password]);
}

function expectNoSecretNoStack(r: CliResult, secrets: string[]): void {
  const all = `${r.stdout}${r.stderr}`;
  for (const secret of secrets) expect(all).not.toContain(secret);
  expect(r.stderr).not.toMatch(STACK_FRAME);
  expect(r.stderr).not.toContain('internal error');
}

async function writeSmallManifest(dir: string): Promise<string> {
  await mkdir(path.join(dir, 'files'), { recursive: true });
  const lines = ['path,label'];
  for (let i = 0; i < SAMPLES; i++) {
    await writeFile(path.join(dir, 'files', `${i}.bin`), `sample-${i}`.padEnd(64, 'x'));
    lines.push(`files/${i}.bin,${i % 5}`);
  }
  const manifest = path.join(dir, 'manifest.csv');
  await writeFile(manifest, `${lines.join('\n')}\n`);
  return manifest;
}

/** A self-signed CA that signed nothing of the node's: what "the wrong CA" looks like. */
async function makeUnrelatedCa(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const java = findJava();
  const keytool = path.isAbsolute(java) ? path.join(path.dirname(java), 'keytool') : 'keytool';
  const store = ['-keystore', path.join(dir, 'ca.p12'), '-storetype', 'PKCS12'];
  const pass = ['-storepass', 'unrelated-ca', '-noprompt'];
  const run = promisify(execFile);
  await run(keytool, [
    '-genkeypair',
    '-alias',
    'ca',
    '-keyalg',
    'EC',
    '-groupname',
    'secp256r1',
    '-dname',
    'CN=unrelated test CA',
    '-ext',
    'bc:c',
    '-validity',
    '30',
    ...store,
    ...pass,
  ]);
  const file = path.join(dir, 'ca.pem');
  await run(keytool, ['-exportcert', '-rfc', '-alias', 'ca', '-file', file, ...store, ...pass]);
  return file;
}
