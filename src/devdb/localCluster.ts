import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ensureCassandraJars } from './cassandraJars.js';
import { type DevKeystores, renderCassandraYaml } from './cassandraYaml.js';
import { DEFAULT_CASSANDRA_VERSION } from './cassandraVersion.js';
import {
  type ClusterSpec,
  clusterSpecSchema,
  readClusterSpec,
  writeClusterSpec,
} from './clusterSpec.js';
import { findJava } from './findJava.js';
import { freePort } from './freePort.js';
import { type DevTlsFiles, devClientCertFiles, ensureDevTls } from './devTls.js';
import { ensureDevRole, superuserAccess } from './devRole.js';
import { cassandraJvmArgs } from './jvmArgs.js';
import { logTail } from './logTail.js';
import { renderLogbackXml } from './logbackXml.js';
import { type NodeLayout, nodeLayouts } from './nodeLayout.js';
import { liveNodePid, removePidFile } from './nodeProcess.js';
import { isPortOpen } from './portOpen.js';
import { probeCql } from './probeCql.js';
import { acquireStartLock } from './startLock.js';
import { terminatePid } from './terminateNode.js';
import {
  ClusterNotReadyError,
  type DevAccess,
  type WatchedNode,
  probeTls,
  waitForCluster,
} from './waitForCluster.js';
import { LoaderError } from '../core/index.js';

/** Options of {@link startLocalCluster}. Omitted values come from the folder's `cluster.json`. */
export interface StartLocalClusterOptions {
  /** Folder holding the nodes' data, logs, configuration and pid files. */
  stateDir: string;
  /** Number of nodes (default 1). */
  nodes?: number;
  /** Address of node 1; node i gets the (i-1)-th next address (default `127.0.0.1`). */
  firstAddress?: string;
  /** Default `scylla-loader-dev`. A ring must differ from any other on the machine. */
  clusterName?: string;
  /** Heap of each node (default 768 for one node, 512 each for several). */
  heapMb?: number;
  /** CQL port of every node (default 9042). */
  nativePort?: number;
  /** Internode port of every node (default 7000). */
  storagePort?: number;
  /** JMX port of node 1 (node i gets base + i - 1); by default free ports are picked. */
  jmxBasePort?: number;
  /** Cassandra release (default {@link DEFAULT_CASSANDRA_VERSION}). */
  version?: string;
  /** Receives progress lines meant for a person. */
  log?: (line: string) => void;
  /** How long to wait for the nodes to be ready (default 180 s). */
  timeoutMs?: number;
  /** Password authentication (a new cluster only): see {@link LocalCluster.auth}. */
  auth?: boolean;
  /** CQL over TLS only (a new cluster only), with a test CA: see {@link LocalCluster.tls}. */
  tls?: boolean;
  /**
   * With `tls`, also accept plaintext CQL clients on the same port (`optional: true`); taken
   * at every start (default: what the folder was last started with, else false).
   */
  tlsOptional?: boolean;
  /**
   * With `tls`, clients must present a certificate signed by the test CA (a new cluster only);
   * the folder keeps one for clients: see {@link LocalCluster.tls}.
   */
  tlsClientAuth?: boolean;
}

/** A running local cluster, as the driver needs it. */
export interface LocalCluster {
  contactPoints: string[];
  port: number;
  /** SimpleSnitch puts every node in this datacenter. */
  localDataCenter: 'datacenter1';
  stateDir: string;
  /** Cassandra's log of each node, in node order. */
  logFiles: string[];
  /** True when every node was already running and nothing was started. */
  reused: boolean;
  /** With `auth`: the login role made for clients and the file holding its password. */
  auth?: { username: string; passwordFile: string };
  /**
   * With `tls`: PEM of the test CA that signed the nodes' certificate, for clients to trust;
   * with `tlsClientAuth` also a client certificate and its key (PEM) that the nodes accept.
   */
  tls?: { caFile: string; clientCertFile?: string; clientKeyFile?: string };
}

/**
 * Starts a local Apache Cassandra cluster of one or more nodes from Maven jars (see
 * {@link ensureCassandraJars}), or reuses it when it already runs, and resolves once every node
 * serves CQL and the nodes see each other.
 *
 * Nodes run detached, so they outlive the calling process: a test run or CLI call that ends
 * leaves them up for the next one, which then returns within a second. Stop them with
 * `stopLocalCluster`. Nodes of the folder that are down (e.g. one stopped by a test) are
 * started again, the running ones are kept.
 *
 * With `auth` the nodes check passwords and a login role is made (see `ensureDevRole`); with
 * `tls` their CQL port speaks TLS only, with a certificate from a test CA the folder keeps
 * (see `ensureDevTls`). Both are fixed when the folder's cluster is created.
 *
 * On failure (a node exits, or the timeout passes) the processes started by this call are
 * killed and the error names the log file with its last lines.
 */
export async function startLocalCluster(opts: StartLocalClusterOptions): Promise<LocalCluster> {
  const stateDir = path.resolve(opts.stateDir);
  const timeoutMs = opts.timeoutMs ?? 180_000;
  await mkdir(stateDir, { recursive: true });
  const release = await acquireStartLock(stateDir, timeoutMs, opts.log);
  try {
    const spec = resolveSpec(stateDir, await readClusterSpec(stateDir), opts);
    const layouts = nodeLayouts(stateDir, spec);
    const running: WatchedNode[] = [];
    const down: NodeLayout[] = [];
    for (const layout of layouts) {
      const pid = await liveNodePid(layout);
      if (pid === undefined) {
        // Stale or absent: a pid file must never outlive its process.
        await removePidFile(layout);
        down.push(layout);
      } else {
        running.push({ layout, pid });
      }
    }
    const contactPoints = layouts.map((l) => l.address);
    const caFile = path.join(stateDir, 'tls', 'ca.pem');
    const client = devClientCertFiles(stateDir);
    /** The CA to trust and, with client auth, the certificate to present. */
    const tlsAccess = async (): Promise<Pick<DevAccess, 'ca' | 'clientCert'>> => {
      if (!spec.tls) return {};
      const ca = await readFile(caFile, 'utf8');
      if (!spec.tlsClientAuth) return { ca };
      const [cert, key] = await Promise.all([
        readFile(client.certFile, 'utf8'),
        readFile(client.keyFile, 'utf8'),
      ]);
      return { ca, clientCert: { cert, key } };
    };
    const result = async (reused: boolean): Promise<LocalCluster> => {
      // Also when reused: one login checks the role, and repairs it after a start that failed
      // before making it or a password file deleted since.
      const auth = spec.auth
        ? await ensureDevRole(stateDir, contactPoints, spec.nativePort, await tlsAccess())
        : undefined;
      return {
        contactPoints,
        port: spec.nativePort,
        localDataCenter: 'datacenter1',
        stateDir,
        logFiles: layouts.map((l) => l.systemLog),
        reused,
        ...(auth ? { auth } : {}),
        ...(spec.tls
          ? {
              tls: {
                caFile,
                ...(spec.tlsClientAuth
                  ? { clientCertFile: client.certFile, clientKeyFile: client.keyFile }
                  : {}),
              },
            }
          : {}),
      };
    };
    const access = async (): Promise<DevAccess> => {
      const tls = await tlsAccess();
      return spec.auth ? { ...superuserAccess(), ...tls } : tls;
    };

    if (down.length === 0) {
      const answering = await Promise.all(
        running.map(async (n) =>
          probeCql(n.layout.address, spec.nativePort, 2000, probeTls(await access())),
        ),
      );
      if (!answering.every(Boolean)) {
        // Started by someone who gave up waiting, or still replaying its commit log.
        opts.log?.('cluster processes are running but not all answer CQL yet; waiting');
        await waitOrExplain(running, spec, Date.now() + timeoutMs, opts.log, await access());
      }
      return await result(true);
    }

    await assertAddressesFree(down, spec, stateDir);
    const libDir = await ensureCassandraJars({ version: spec.cassandraVersion, log: opts.log });
    const jammJar = (await readdir(libDir)).find((n) => /^jamm-.*\.jar$/.test(n));
    if (!jammJar) throw new Error(`no jamm-*.jar in ${libDir}; delete that folder to re-download`);
    const java = findJava();
    let tlsFiles: DevTlsFiles | undefined;
    if (spec.tls) {
      tlsFiles = await ensureDevTls(stateDir, contactPoints, java, {
        clientAuth: spec.tlsClientAuth,
        ...(opts.log ? { log: opts.log } : {}),
      });
    }
    await writeClusterSpec(stateDir, spec);

    // The timeout covers the nodes' start, not a first-time download before it.
    const deadline = Date.now() + timeoutMs;
    const started: WatchedNode[] = [];
    try {
      for (const layout of down) {
        const jmxPort = spec.jmxBasePort ? spec.jmxBasePort + layout.index - 1 : await freePort();
        const args = cassandraJvmArgs({
          node: layout,
          libDir,
          jammJar,
          heapMb: spec.heapMb,
          jmxPort,
          auth: spec.auth,
        });
        opts.log?.(
          `starting node ${layout.index} of ${spec.nodes} on ${layout.address}:${spec.nativePort} ` +
            `(heap ${spec.heapMb} MiB, JMX 127.0.0.1:${jmxPort}, log ${layout.systemLog})`,
        );
        started.push(await spawnNode(java, args, spec, layout, tlsFiles));
      }
      await waitOrExplain([...running, ...started], spec, deadline, opts.log, await access());
    } catch (err) {
      // Leave nothing half-started behind: the next attempt must begin from a clean slate.
      await Promise.all(
        started.map(async (n) => {
          await terminatePid(n.pid, { signal: 'SIGKILL' }).catch(() => undefined);
          await removePidFile(n.layout);
        }),
      );
      throw err;
    }
    return await result(false);
  } finally {
    await release();
  }
}

/** Fails fast, with a remedy, when another process holds the ports a node would bind. */
async function assertAddressesFree(
  nodes: NodeLayout[],
  spec: ClusterSpec,
  stateDir: string,
): Promise<void> {
  for (const node of nodes) {
    for (const port of [spec.nativePort, spec.storagePort]) {
      if (await isPortOpen(node.address, port)) {
        throw new LoaderError(
          'FAILED_PRECONDITION',
          `${node.address}:${port} is already in use by a process that is not node ` +
            `${node.index} of ${stateDir}: probably another local cluster on the same address ` +
            '(`scylla-loader db status --state-dir <its folder>`), or a Cassandra/ScyllaDB ' +
            'started otherwise. Stop it, or give this cluster other addresses (--first-address).',
        );
      }
    }
  }
}

/** Starts the line written to a node's stdout log before each start, with the command line. */
const START_HEADER = '=== starting';

const IDENTITY_KEYS = [
  'clusterName',
  'nodes',
  'firstAddress',
  'nativePort',
  'storagePort',
  'version',
  'auth',
  'tls',
  'tlsClientAuth',
] as const;

/**
 * Merges the options with what the folder was created with. Options that define the cluster's
 * identity must match: Cassandra refuses to start on data of another cluster name, and other
 * addresses or ports would orphan the running nodes.
 */
function resolveSpec(
  stateDir: string,
  existing: ClusterSpec | undefined,
  opts: StartLocalClusterOptions,
): ClusterSpec {
  if (existing) {
    const current = { ...existing, version: existing.cassandraVersion };
    const conflicts = IDENTITY_KEYS.filter(
      (k) => opts[k] !== undefined && opts[k] !== current[k],
    ).map((k) => `${k} ${String(current[k])} (asked for ${String(opts[k])})`);
    if (conflicts.length > 0) {
      throw new LoaderError(
        'FAILED_PRECONDITION',
        `${stateDir} holds a local cluster created with ${conflicts.join(', ')}; start it ` +
          'with the same options, or stop it and delete that folder, or use another state folder',
      );
    }
  }
  const nodes = existing?.nodes ?? opts.nodes ?? 1;
  const jmxBasePort = opts.jmxBasePort ?? existing?.jmxBasePort;
  const parsed = clusterSpecSchema.safeParse({
    format: 1,
    cassandraVersion: existing?.cassandraVersion ?? opts.version ?? DEFAULT_CASSANDRA_VERSION,
    clusterName: existing?.clusterName ?? opts.clusterName ?? 'scylla-loader-dev',
    nodes,
    firstAddress: existing?.firstAddress ?? opts.firstAddress ?? '127.0.0.1',
    nativePort: existing?.nativePort ?? opts.nativePort ?? 9042,
    storagePort: existing?.storagePort ?? opts.storagePort ?? 7000,
    // Not part of the identity: a later start may change it.
    heapMb: opts.heapMb ?? existing?.heapMb ?? (nodes === 1 ? 768 : 512),
    ...(jmxBasePort === undefined ? {} : { jmxBasePort }),
    auth: existing?.auth ?? opts.auth ?? false,
    // Client certificates are a kind of TLS: asking for them asks for TLS.
    tls: existing?.tls ?? (opts.tls || opts.tlsClientAuth) ?? false,
    tlsClientAuth: existing?.tlsClientAuth ?? opts.tlsClientAuth ?? false,
    // Not part of the identity either: the yaml is rewritten at every start.
    tlsOptional: opts.tlsOptional ?? existing?.tlsOptional ?? false,
  });
  if (!parsed.success) {
    throw new Error(`invalid local cluster options:\n${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}

async function spawnNode(
  java: string,
  args: string[],
  spec: ClusterSpec,
  layout: NodeLayout,
  tlsFiles: DevTlsFiles | undefined,
): Promise<WatchedNode> {
  for (const dir of [
    layout.confDir,
    layout.dataDir,
    layout.commitlogDir,
    layout.hintsDir,
    layout.savedCachesDir,
    layout.cdcRawDir,
    layout.tmpDir,
    layout.triggersDir,
    layout.logDir,
  ]) {
    await mkdir(dir, { recursive: true });
  }
  const keystore: DevKeystores | undefined = tlsFiles && {
    file: tlsFiles.keystoreFile,
    password: tlsFiles.keystorePassword,
    ...(tlsFiles.truststoreFile ? { truststore: tlsFiles.truststoreFile } : {}),
  };
  // Owner-only: with --tls the file holds the keystore password.
  await writeFile(layout.yamlFile, renderCassandraYaml(spec, layout, keystore), { mode: 0o600 });
  await writeFile(layout.logbackFile, renderLogbackXml(layout.systemLog));

  const out = openSync(layout.stdoutLog, 'a');
  let child: ChildProcess;
  try {
    writeSync(out, `\n${START_HEADER} ${new Date().toISOString()} ${java} ${args.join(' ')}\n`);
    child = spawn(java, args, {
      cwd: layout.dir,
      // Its own process group, no pipes to us: the node lives on after this process exits.
      detached: true,
      stdio: ['ignore', out, out],
      // glibc's per-thread malloc arenas bloat a JVM's resident size; bin/cassandra sets 4.
      env: { ...process.env, MALLOC_ARENA_MAX: '4' },
    });
  } finally {
    closeSync(out);
  }
  if (child.pid === undefined) {
    const [err] = (await once(child, 'error')) as [Error];
    throw new LoaderError(
      'FAILED_PRECONDITION',
      `cannot run ${java}: ${err.message} (Java 17 is required)`,
      { cause: err },
    );
  }
  // Errors after a successful spawn surface as the exit the readiness wait watches for.
  child.on('error', () => undefined);
  child.unref();
  await writeFile(layout.pidFile, `${child.pid}\n`);
  return { layout, pid: child.pid, child };
}

/** Runs {@link waitForCluster}, turning its failure into a message with the logs' tails. */
async function waitOrExplain(
  nodes: WatchedNode[],
  spec: ClusterSpec,
  deadline: number,
  log: ((line: string) => void) | undefined,
  access: DevAccess,
): Promise<void> {
  try {
    await waitForCluster(nodes, spec.nativePort, deadline, log, access);
  } catch (err) {
    if (!(err instanceof ClusterNotReadyError)) throw err;
    const blamed = err.node ? [err.node] : nodes.map((n) => n.layout);
    const parts = [`local Cassandra cluster did not become ready: ${err.message}`];
    for (const layout of blamed) {
      parts.push(`Log file: ${layout.systemLog}`);
      const tail = await logTail(layout.systemLog, 20);
      parts.push(tail ? `Last lines:\n${tail}` : '(Cassandra wrote no log)');
      // Start-up failures before logging works (bad JVM flag, wrong Java) only reach stdout.
      const stdout = jvmOutputOfLastStart(await logTail(layout.stdoutLog, 40));
      if (stdout) parts.push(`Output of the JVM (${layout.stdoutLog}):\n${stdout}`);
    }
    throw new LoaderError('UNAVAILABLE', parts.join('\n'), { cause: err });
  }
}

/**
 * What the JVM printed since the last start header, minus the warnings every start prints
 * (Cassandra installs a SecurityManager, which Java 17 deprecates).
 */
function jvmOutputOfLastStart(tail: string): string {
  const lines = tail.split('\n');
  const header = lines.findLastIndex((l) => l.startsWith(START_HEADER));
  return lines
    .slice(header + 1)
    .filter((l) => !/^WARNING: .*(SecurityManager|terminally deprecated)/.test(l))
    .slice(-10)
    .join('\n')
    .trim();
}
