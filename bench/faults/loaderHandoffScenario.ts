import type { FaultBed } from './FaultBed.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';

/**
 * Loader: two replicas share the resume key; 4 ranks stream from one, which is SIGKILLed
 * mid-epoch, and the ranks go on from the other with their tokens (as a Service would send
 * them elsewhere). Long: a fresh standby is started and the hand-off repeated.
 *
 * @internal
 */
export async function loaderHandoffScenario(
  bed: FaultBed,
  scale: ScenarioScale,
): Promise<ScenarioResult> {
  const at = scale === 'quick' ? [0.3] : [0.25, 0.6];
  return runScenario(bed, {
    name: 'loader hand-off to a replica',
    worldSize: 4,
    epochs: 2,
    batchSize: 16,
    stepMs: 40,
    loaders: 2,
    inject: async (ctx) => {
      for (const [i, share] of at.entries()) {
        const standby = ctx.fleet.loaders.at(-1)!;
        if (!(await ctx.untilDelivered(share))) return;
        const dying = ctx.fleet.active;
        ctx.fleet.switchTo(standby);
        await ctx.fleet.kill('SIGKILL', dying);
        ctx.fault('loader SIGKILL, replica takes over');
        if (i < at.length - 1) await ctx.fleet.start({ standby: true });
      }
    },
  });
}
