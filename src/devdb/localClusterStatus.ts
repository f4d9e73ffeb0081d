import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { readClusterSpec } from './clusterSpec.js';
import { nodeLayouts } from './nodeLayout.js';
import { liveNodePid } from './nodeProcess.js';
import { devClientCertFiles } from './devTls.js';
import { probeCql } from './probeCql.js';

/** One node in {@link localClusterStatus}. */
export interface LocalNodeStatus {
  /** 1-based, as in the folder name `node<index>`. */
  index: number;
  address: string;
  port: number;
  /** Pid of the running node, null when it is not running. */
  pid: number | null;
  running: boolean;
  /** Whether the node answers a CQL request right now. */
  cqlUp: boolean;
  logFile: string;
}

/**
 * Reports each node of the local cluster in `stateDir`: whether its process runs and whether it
 * answers CQL. Empty when the folder holds no cluster. Read-only: stale pid files are left for
 * the next start or stop to clean up.
 */
export async function localClusterStatus(stateDir: string): Promise<{ nodes: LocalNodeStatus[] }> {
  const dir = path.resolve(stateDir);
  const spec = await readClusterSpec(dir);
  if (!spec) return { nodes: [] };
  // A node that requires client certificates answers only a client that presents one.
  const probeTls = async (): Promise<boolean | { cert: string; key: string }> => {
    if (!spec.tls || !spec.tlsClientAuth) return spec.tls;
    const files = devClientCertFiles(dir);
    const [cert, key] = await Promise.all([
      readFile(files.certFile, 'utf8').catch(() => ''),
      readFile(files.keyFile, 'utf8').catch(() => ''),
    ]);
    return cert && key ? { cert, key } : true;
  };
  const nodes = await Promise.all(
    nodeLayouts(dir, spec).map(async (node): Promise<LocalNodeStatus> => {
      const pid = await liveNodePid(node);
      const running = pid !== undefined;
      return {
        index: node.index,
        address: node.address,
        port: spec.nativePort,
        pid: pid ?? null,
        running,
        cqlUp: running && (await probeCql(node.address, spec.nativePort, 2000, await probeTls())),
        logFile: node.systemLog,
      };
    }),
  );
  return { nodes };
}
