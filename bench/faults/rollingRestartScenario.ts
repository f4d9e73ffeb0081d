import { startLocalCluster } from '../../src/devdb/localCluster.js';
import { stopLocalNode } from '../../src/devdb/stopLocalNode.js';
import type { FaultBed } from './FaultBed.js';
import { requireRing } from './nodeKillScenario.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';

/**
 * Ring: restarts every node in turn (SIGTERM, wait for the exit, start, wait until it serves)
 * during one epoch, as an upgrade does. At every moment one node is down or rejoining.
 *
 * @internal
 */
export async function rollingRestartScenario(
  bed: FaultBed,
  scale: ScenarioScale,
): Promise<ScenarioResult> {
  const stateDir = requireRing(bed);
  return runScenario(bed, {
    name: 'ring: rolling restart',
    worldSize: 2,
    epochs: 1,
    batchSize: 8,
    // Three restarts take a minute or more here: the epoch must outlast them (the step ends,
    // and the rest of the epoch runs free, once the last node is back).
    stepMs: scale === 'quick' ? 1000 : 1500,
    inject: async (ctx) => {
      if (!(await ctx.untilDelivered(0.05))) return;
      for (const node of [1, 2, 3]) {
        const t = performance.now();
        await stopLocalNode(stateDir, node, { signal: 'SIGTERM', graceMs: 20_000 });
        ctx.fault('node restart');
        await startLocalCluster({ stateDir, timeoutMs: 240_000 });
        ctx.log(`node ${node} restarted in ${((performance.now() - t) / 1000).toFixed(1)} s`);
        if (ctx.finished()) ctx.log('the epoch ended before the rolling restart did');
      }
    },
  });
}
