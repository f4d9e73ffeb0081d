import path from 'node:path';
import { readClusterSpec } from './clusterSpec.js';
import { nodeLayouts } from './nodeLayout.js';
import { terminateNode } from './terminateNode.js';

/**
 * Stops every node of the local cluster in `stateDir`: SIGTERM so Cassandra drains (flushes
 * memtables, so the next start is quick), SIGKILL for a node still up after 30 s. Removes the
 * pid files; data and logs stay. A folder without a cluster is not an error.
 */
export async function stopLocalCluster(stateDir: string): Promise<{ stopped: number }> {
  const dir = path.resolve(stateDir);
  const spec = await readClusterSpec(dir);
  if (!spec) return { stopped: 0 };
  const results = await Promise.all(nodeLayouts(dir, spec).map((node) => terminateNode(node)));
  return { stopped: results.filter(Boolean).length };
}
