import { setTimeout as sleep } from 'node:timers/promises';
import type { FaultBed } from './FaultBed.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';

/**
 * Loader: 4 ranks against a loader that admits 2 streams: two ranks get RESOURCE_EXHAUSTED
 * and retry (the checker's client backs off) until a slot frees. Every rejection counts as an
 * injected fault.
 *
 * @internal
 */
export async function admissionScenario(
  bed: FaultBed,
  scale: ScenarioScale,
): Promise<ScenarioResult> {
  return runScenario(bed, {
    name: 'loader admission limit (2 of 4)',
    worldSize: 4,
    epochs: scale === 'quick' ? 1 : 2,
    batchSize: 16,
    stepMs: 20,
    loaderEnv: { SCYLLA_LOADER_MAX_STREAMS: '2' },
    inject: async (ctx) => {
      while (!ctx.finished()) await sleep(50);
      for (const r of ctx.streams.history.reconnects) {
        if (r.code === 'RESOURCE_EXHAUSTED') ctx.fault('admission RESOURCE_EXHAUSTED');
      }
    },
  });
}
