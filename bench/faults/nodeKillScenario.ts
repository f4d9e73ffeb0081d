import { setTimeout as sleep } from 'node:timers/promises';
import { startLocalCluster } from '../../src/devdb/localCluster.js';
import { stopLocalNode } from '../../src/devdb/stopLocalNode.js';
import type { FaultBed } from './FaultBed.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';

/**
 * Ring: SIGKILLs one database node (a crash, sockets reset) a quarter into the run, lets the
 * ranks stream on the two survivors for a while, then starts it again and lets it rejoin.
 * With replication 2 every sample keeps a live replica, so no trainer should wait long: the
 * longest stall is the figure to watch.
 *
 * @internal
 */
export async function nodeKillScenario(
  bed: FaultBed,
  scale: ScenarioScale,
  node = 2,
): Promise<ScenarioResult> {
  const stateDir = requireRing(bed);
  return runScenario(bed, {
    name: 'ring: node SIGKILL + restart',
    worldSize: 2,
    epochs: scale === 'quick' ? 1 : 2,
    batchSize: 16,
    stepMs: 150,
    inject: async (ctx) => {
      if (!(await ctx.untilDelivered(0.25))) return;
      await stopLocalNode(stateDir, node, { signal: 'SIGKILL' });
      ctx.fault('node SIGKILL');
      await sleep(scale === 'quick' ? 3_000 : 10_000);
      const t = performance.now();
      await startLocalCluster({ stateDir, timeoutMs: 240_000 });
      ctx.log(`node ${node} back after ${((performance.now() - t) / 1000).toFixed(1)} s`);
    },
  });
}

/** The ring's state folder, or an error saying a node scenario needs one. @internal */
export function requireRing(bed: FaultBed): string {
  if (!bed.ringStateDir) throw new Error('node fault scenarios need a local ring (ringStateDir)');
  return bed.ringStateDir;
}
