import type { FaultBed } from './FaultBed.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';

/**
 * Loader: 4 ranks stream while the loader process is killed with `signal` mid-epoch and a new
 * one (same resume key) is started; the ranks resume on it by token. SIGTERM is the graceful
 * path (streams end with UNAVAILABLE after a 1 s grace period), SIGKILL a crash. Once quick,
 * three times long.
 *
 * @internal
 */
export async function loaderKillScenario(
  bed: FaultBed,
  scale: ScenarioScale,
  signal: 'SIGKILL' | 'SIGTERM',
): Promise<ScenarioResult> {
  const at = scale === 'quick' ? [0.3] : [0.2, 0.45, 0.7];
  return runScenario(bed, {
    name: `loader ${signal} + restart`,
    worldSize: 4,
    epochs: 2,
    batchSize: 16,
    // Slow enough that the 1 s grace of SIGTERM ends mid-epoch.
    stepMs: 100,
    loaderEnv: { SCYLLA_LOADER_SHUTDOWN_GRACE_MS: '1000' },
    inject: async (ctx) => {
      for (const share of at) {
        if (!(await ctx.untilDelivered(share))) return;
        await ctx.fleet.kill(signal);
        ctx.fault(`loader ${signal}`);
        await ctx.fleet.start();
      }
    },
  });
}
