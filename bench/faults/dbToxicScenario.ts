import { setTimeout as sleep } from 'node:timers/promises';
import { type DbToxicKind, dbToxics } from './dbToxics.js';
import type { FaultBed } from './FaultBed.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';
import { startFaultProxies } from './startFaultProxies.js';

/**
 * Network, loader to database: 4 ranks stream through toxiproxy while the `kind` fault is put
 * on the route for 2 s and removed (once quick, three times long).
 *
 * @internal
 */
export async function dbToxicScenario(
  bed: FaultBed,
  scale: ScenarioScale,
  kind: DbToxicKind,
): Promise<ScenarioResult> {
  const proxies = await startFaultProxies(bed);
  const at = scale === 'quick' ? [0.3] : [0.2, 0.45, 0.7];
  try {
    return await runScenario(bed, {
      name: `network db: ${kind}`,
      worldSize: 4,
      epochs: 2,
      batchSize: 16,
      stepMs: 40,
      loaderDb: proxies.db,
      inject: async (ctx) => {
        for (const share of at) {
          if (!(await ctx.untilDelivered(share))) return;
          await proxies.toxiproxy.setToxics('db', dbToxics(kind));
          ctx.fault(`db ${kind}`);
          await sleep(2_000);
          await proxies.toxiproxy.setToxics('db', []);
        }
      },
    });
  } finally {
    await proxies.stop();
  }
}
