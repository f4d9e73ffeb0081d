import path from 'node:path';
import { readClusterSpec } from './clusterSpec.js';
import { nodeLayouts } from './nodeLayout.js';
import { type TerminateOptions, terminateNode } from './terminateNode.js';
import { LoaderError } from '../core/index.js';

/**
 * Stops one node of the local cluster in `stateDir`, leaving the others running: for tests of
 * losing a node mid-stream. `index` is 1-based, as in the folder names (`node2`). Pass
 * `{ signal: 'SIGKILL' }` to simulate a crash rather than a clean shutdown. Bring the node back
 * with `startLocalCluster` on the same folder, which starts only the nodes that are down.
 */
export async function stopLocalNode(
  stateDir: string,
  index: number,
  opts: TerminateOptions = {},
): Promise<{ stopped: boolean }> {
  const dir = path.resolve(stateDir);
  const spec = await readClusterSpec(dir);
  const node = spec ? nodeLayouts(dir, spec)[index - 1] : undefined;
  if (!node) {
    throw new LoaderError('NOT_FOUND', `no node ${index} in the local cluster at ${dir}`);
  }
  return { stopped: await terminateNode(node, opts) };
}
