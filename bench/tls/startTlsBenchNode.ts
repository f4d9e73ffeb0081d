import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type DbConfig, dbConfigSchema } from '../../src/core/index.js';
import { localClusterStatus, startLocalCluster, stopLocalCluster } from '../../src/devdb/index.js';

/** The database node of `bench tls`, reachable in plain text and over TLS alike. */
export interface TlsBenchNode {
  /** Plain-text settings of the node. */
  plain: DbConfig;
  /** The same node over TLS, verified against its test CA (host name checked). */
  tls: DbConfig;
  /** Pid of the node, for its CPU seconds. */
  pid: number | undefined;
  /** Stops the node and removes its folder when it was a temporary one; keeps it otherwise. */
  release(): Promise<void>;
}

/**
 * Starts (or reuses) one Cassandra node with `client_encryption_options.optional: true`, so
 * the same node and port serve the plaintext and the TLS legs and only the encryption
 * differs between them. Its certificates come from the folder's own keytool CA (`db start
 * --tls`). With `dir` the node is kept for the next run; without, it lives in a temporary
 * folder that {@link TlsBenchNode.release} stops and removes. @internal
 */
export async function startTlsBenchNode(options: {
  dir: string | undefined;
  address: string;
  heapMb: number;
  log: (line: string) => void;
}): Promise<TlsBenchNode> {
  const own = options.dir === undefined;
  const stateDir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), 'sl-bench-tls-')));
  const remove = async (): Promise<void> => {
    if (!own) return;
    await stopLocalCluster(stateDir).catch(() => undefined);
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    const cluster = await startLocalCluster({
      stateDir,
      firstAddress: options.address,
      clusterName: 'scylla-loader-bench-tls',
      heapMb: options.heapMb,
      tls: true,
      tlsOptional: true,
      timeoutMs: 240_000,
      log: (line) => options.log(`  ${line}`),
    });
    if (!cluster.tls) throw new Error(`the node in ${stateDir} did not report its TLS CA`);
    const plain = dbConfigSchema.parse({
      contactPoints: cluster.contactPoints,
      port: cluster.port,
      localDataCenter: cluster.localDataCenter,
    });
    const { nodes } = await localClusterStatus(stateDir);
    return {
      plain,
      tls: { ...plain, tls: { caFile: cluster.tls.caFile, verifyHostname: true } },
      pid: nodes[0]?.pid ?? undefined,
      release: remove,
    };
  } catch (err) {
    await remove();
    throw err;
  }
}
