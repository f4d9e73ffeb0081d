import { rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { ClientTlsOptions } from '../../src/client/index.js';
import type { DbConfig } from '../../src/core/index.js';
import { makeTestCa, type TestCa } from '../../src/devdb/index.js';
import { newTokenEntry } from '../../src/server/index.js';
import { measureLoaderRun } from '../measure/measureLoaderRun.js';
import { preparePhotoBench } from '../dataset/benchDataset.js';
import type { SdkClientConfig, SdkClientResult } from '../stream/sdkClientChild.js';
import { startServeProcess, warmUpLoader, type ServeProcess } from '../stream/serveProcess.js';
import { startBenchChild } from '../stream/startBenchChild.js';
import { legRuns } from '../transform/transformLegs.js';
import { startTlsBenchNode } from './startTlsBenchNode.js';
import type { TlsBenchOptions } from './TlsBenchOptions.js';
import type { TlsLegRun } from './TlsBenchReport.js';
import { summarizeTlsRuns } from './summarizeTlsRuns.js';
import { TLS_LEGS, type TlsLegSpec } from './tlsLegs.js';
import { startBenchRun } from '../report/benchRun.js';

/**
 * Security settings a `serve` child could inherit from the shell of whoever runs the benchmark;
 * each leg sets its own, so inherited ones are removed (undefined drops a variable).
 */
const INHERITED_SECURITY_ENV = [
  'SCYLLA_LOADER_TLS_CERT',
  'SCYLLA_LOADER_TLS_KEY',
  'SCYLLA_LOADER_TLS_CLIENT_CA',
  'SCYLLA_LOADER_AUTH_TOKENS_FILE',
  'SCYLLA_LOADER_DB_USERNAME',
  'SCYLLA_LOADER_DB_PASSWORD',
  'SCYLLA_LOADER_DB_PASSWORD_FILE',
  'SCYLLA_LOADER_DB_TLS',
  'SCYLLA_LOADER_DB_TLS_CA',
  'SCYLLA_LOADER_DB_TLS_CERT',
  'SCYLLA_LOADER_DB_TLS_KEY',
  'SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME',
];

/** The gRPC side's files: a test CA, the loader's certificate, a trainer's, a token. */
interface GrpcSecurity {
  ca: TestCa;
  server: { certFile: string; keyFile: string };
  client: { certFile: string; keyFile: string };
  tokensFile: string;
  token: string;
}

/** A leg's loader and how a trainer reaches it. */
interface LegLoader {
  serve: ServeProcess;
  client: { tls?: ClientTlsOptions; token?: string };
}

/**
 * Issue 15's benchmark: one database node that takes TLS and plaintext on the same port (its
 * own, see {@link startTlsBenchNode}), `bench stream`'s imagenet photo dataset on it, one
 * `serve` child per leg ({@link TLS_LEGS}: gRPC plain/TLS/mTLS + token x database plain/TLS),
 * each warmed up, then `runs` rounds in which every leg streams one epoch through a fresh SDK
 * client child, the legs' order rotating each round, while this process meters the loader's
 * and the node's CPU around the child's measured part. Every child, the loaders, the test CA
 * and (unless kept) the node are removed whatever happens. Writes the JSON report to `outDir`.
 */
export async function runTlsBench(options: TlsBenchOptions) {
  const { log, signal, progress, measureEach, writeReport } = startBenchRun(options);
  const legs = TLS_LEGS.filter((l) => options.legs.includes(l.name));

  log(
    `starting the benchmark's database node on ${options.nodeAddress} ` +
      `(${options.nodeDir ?? 'temporary folder'}; TLS optional)`,
  );
  const node = await startTlsBenchNode({
    dir: options.nodeDir,
    address: options.nodeAddress,
    heapMb: options.nodeHeapMb,
    log,
  });
  let grpc: GrpcSecurity | undefined;
  const serves: ServeProcess[] = [];
  try {
    const { environment, dataset } = await preparePhotoBench({
      ...options,
      db: node.plain,
      progress,
      log,
    });

    grpc = makeGrpcSecurity(options.dataset);
    const loaders = new Map<string, LegLoader>();
    for (const leg of legs) {
      signal?.throwIfAborted();
      const loader = await startLegLoader(leg, leg.db === 'tls' ? node.tls : node.plain, grpc);
      serves.push(loader.serve);
      await warmUpLoader(loader.serve, {
        dataset: options.dataset,
        batchSize: options.batchSize,
        signal,
        client: loader.client,
      });
      loaders.set(leg.name, loader);
    }

    const runs = await measureEach(
      'bench tls',
      'legs',
      legRuns(legs, options.runs),
      ({ leg, run }) => runLeg(options, leg, run, loaders.get(leg.name)!, node.pid),
      (r, { leg, run }) =>
        `run ${run + 1} ${leg.name}: ${(r.bytes / r.wallSeconds / 1e6).toFixed(1)} MB/s, ` +
        `${(r.samples / r.wallSeconds).toFixed(0)} samples/s, loader ` +
        `${r.cpuSeconds.loader === undefined ? 'n/a' : ((1e9 * r.cpuSeconds.loader) / r.bytes).toFixed(2)} CPU s/GB`,
    );

    return writeReport('tls', options.outDir, {
      environment,
      settings: {
        samples: options.samples,
        batchSize: options.batchSize,
        runs: options.runs,
        legs,
        nodeAddress: options.nodeAddress,
      },
      dataset,
      runs,
      summary: summarizeTlsRuns(legs, runs),
      notes: [
        "gRPC certificates: a P-256 test CA made with openssl; the database node's: a P-256 " +
          'test CA made with keytool (db start --tls); TLS 1.3 as negotiated by Node.js and Java',
        'the client is on the same machine: its TLS work competes with the loader and the ' +
          'database for the same cores',
      ],
    });
  } finally {
    await Promise.allSettled(serves.map((s) => s.stop()));
    if (grpc) await rm(grpc.ca.dir, { recursive: true, force: true });
    await node.release();
  }
}

/** A test CA with the loader's and a trainer's certificates, and a reader token for `dataset`. */
function makeGrpcSecurity(dataset: string): GrpcSecurity {
  const ca = makeTestCa('bench-tls');
  try {
    const server = ca.issue('localhost', 'server');
    const client = ca.issue('bench-trainer', 'client');
    const { token, entry } = newTokenEntry({
      name: 'bench-trainer',
      role: 'reader',
      datasets: [dataset],
    });
    const tokensFile = path.join(ca.dir, 'tokens.json');
    writeFileSync(tokensFile, `${JSON.stringify({ tokens: [entry] }, null, 2)}\n`, {
      mode: 0o600,
    });
    return {
      ca,
      server: { certFile: server.certFile, keyFile: server.keyFile },
      client: { certFile: client.certFile, keyFile: client.keyFile },
      tokensFile,
      token,
    };
  } catch (err) {
    rmSync(ca.dir, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Starts the `serve` child of a leg: the database settings of its database leg, and TLS, mTLS
 * and the tokens file of its gRPC leg, all through the environment as a deployment sets them.
 */
async function startLegLoader(
  leg: TlsLegSpec,
  db: DbConfig,
  grpc: GrpcSecurity,
): Promise<LegLoader> {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    INHERITED_SECURITY_ENV.map((name) => [name, undefined]),
  );
  if (db.tls?.caFile) env['SCYLLA_LOADER_DB_TLS_CA'] = db.tls.caFile;
  const client: LegLoader['client'] = {};
  if (leg.grpc !== 'plain') {
    env['SCYLLA_LOADER_TLS_CERT'] = grpc.server.certFile;
    env['SCYLLA_LOADER_TLS_KEY'] = grpc.server.keyFile;
    // The certificate names localhost; an IP as TLS server name is refused by RFC 6066.
    client.tls = { ca: grpc.ca.certFile, serverName: 'localhost' };
  }
  if (leg.grpc === 'mtls-token') {
    env['SCYLLA_LOADER_TLS_CLIENT_CA'] = grpc.ca.certFile;
    env['SCYLLA_LOADER_AUTH_TOKENS_FILE'] = grpc.tokensFile;
    client.tls = { ...client.tls, cert: grpc.client.certFile, key: grpc.client.keyFile };
    client.token = grpc.token;
  }
  const serve = await startServeProcess({ db, env });
  return { serve, client };
}

/**
 * One leg's epoch in a fresh SDK client child against its loader, with the loader's and the
 * node's CPU metered around the child's measured part; a run that did not deliver every sample
 * is an error (a benchmark that lost samples measured something else).
 */
async function runLeg(
  options: TlsBenchOptions,
  leg: TlsLegSpec,
  run: number,
  loader: LegLoader,
  dbPid: number | undefined,
): Promise<TlsLegRun> {
  const config: SdkClientConfig = {
    address: loader.serve.address,
    dataset: options.dataset,
    batchSize: options.batchSize,
    seed: run,
    ordering: 'out-of-order',
    // The loader is warm (warmUpLoader); an eighth of an epoch warms the child's JIT.
    warmupWorldSize: 8,
    ...loader.client,
  };
  const { result, cpu } = await measureLoaderRun(
    startBenchChild<SdkClientResult>('sdkClientChild', config, {
      timeoutMs: Math.max(600_000, options.samples * 100),
    }),
    { loader: loader.serve.pid, db: dbPid },
    options.signal,
  );
  if (result.samples !== options.samples) {
    throw new Error(
      `leg ${leg.name} run ${run + 1} delivered ${result.samples} samples, expected ${options.samples}`,
    );
  }
  return {
    leg: leg.name,
    run,
    samples: result.samples,
    bytes: result.bytes,
    wallSeconds: result.wallSeconds,
    cpuSeconds: {
      ...(cpu.loader === undefined ? {} : { loader: cpu.loader }),
      client: result.cpuSeconds,
      ...(cpu.db === undefined ? {} : { database: cpu.db }),
    },
  };
}

/** Everything `bench tls` measured, as written to its JSON file. */
export type TlsBenchReport = Awaited<ReturnType<typeof runTlsBench>>;
