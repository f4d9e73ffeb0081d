import { localClusterStatus } from '../../src/devdb/index.js';

/**
 * Pids of the running nodes of the local cluster in `stateDir` (empty when there is none).
 * Looked up before each run rather than once, since a cold start gives the node a new pid.
 * @internal
 */
export async function localDatabasePids(stateDir: string | undefined): Promise<number[]> {
  if (stateDir === undefined) return [];
  const { nodes } = await localClusterStatus(stateDir);
  return nodes.flatMap((n) => (n.pid === null ? [] : [n.pid]));
}
