import { setTimeout as sleep } from 'node:timers/promises';
import { localClusterStatus } from '../../src/devdb/localClusterStatus.js';
import type { FaultBed } from './FaultBed.js';
import { requireRing } from './nodeKillScenario.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';

/**
 * Ring: SIGSTOPs one database node (20 s long, 6 s quick) and then SIGCONTs it. A hung node
 * keeps its connections open and answers nothing, which no socket error reveals: only the
 * loader's hedged second reads to the other replica keep the trainers fed, so the longest
 * stall measures the hedging.
 *
 * @internal
 */
export async function nodeHangScenario(
  bed: FaultBed,
  scale: ScenarioScale,
  node = 3,
): Promise<ScenarioResult> {
  const stateDir = requireRing(bed);
  const hangMs = scale === 'quick' ? 6_000 : 20_000;
  return runScenario(bed, {
    name: `ring: node SIGSTOP ${hangMs / 1000} s`,
    worldSize: 2,
    epochs: scale === 'quick' ? 1 : 2,
    batchSize: 16,
    // The hang must fall inside the run: a slower step stretches the epoch past it.
    stepMs: scale === 'quick' ? 60 : 120,
    inject: async (ctx) => {
      if (!(await ctx.untilDelivered(0.2))) return;
      const { nodes } = await localClusterStatus(stateDir);
      const pid = nodes[node - 1]?.pid;
      if (!pid) throw new Error(`node ${node} of ${stateDir} is not running`);
      process.kill(pid, 'SIGSTOP');
      ctx.fault('node SIGSTOP');
      try {
        await sleep(hangMs);
      } finally {
        process.kill(pid, 'SIGCONT');
      }
    },
  });
}
