import { setTimeout as sleep } from 'node:timers/promises';
import type { Toxic } from '../latency/toxiproxy.js';
import type { FaultBed } from './FaultBed.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';
import { startFaultProxies } from './startFaultProxies.js';

/**
 * The toxics that reset the trainers' connections in the middle of a batch: the route is
 * first narrowed (so a batch takes a good part of a second to cross it), then reset.
 *
 * @internal
 */
export const SLOW_FRONT: Toxic = {
  name: 'slow_downstream',
  type: 'bandwidth',
  stream: 'downstream',
  attributes: { rate: 32 },
};

/**
 * Network, trainer to loader: 4 ranks stream through a proxy in front of the loader, whose
 * connections are reset while batches are crossing it (twice quick, five times long).
 *
 * @internal
 */
export async function clientResetScenario(
  bed: FaultBed,
  scale: ScenarioScale,
): Promise<ScenarioResult> {
  const proxies = await startFaultProxies(bed);
  let front = '';
  const resets = scale === 'quick' ? 2 : 5;
  try {
    return await runScenario(bed, {
      name: 'network client: reset mid-batch',
      worldSize: 4,
      epochs: 2,
      batchSize: 16,
      stepMs: 40,
      address: () => () => front,
      inject: async (ctx) => {
        for (let i = 0; i < resets; i++) {
          if (!(await ctx.untilDelivered((i + 1) / (resets + 2)))) return;
          await proxies.toxiproxy.setToxics('front', [SLOW_FRONT]);
          await sleep(300);
          await proxies.toxiproxy.setToxics('front', [
            SLOW_FRONT,
            { name: 'reset', type: 'reset_peer', stream: 'downstream', attributes: { timeout: 0 } },
          ]);
          ctx.fault('client reset mid-batch');
          await sleep(100);
          await proxies.toxiproxy.setToxics('front', []);
        }
      },
      beforeStreams: async (fleet) => {
        front = await proxies.front(fleet.address());
      },
    });
  } finally {
    await proxies.stop();
  }
}
