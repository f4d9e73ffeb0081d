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
    // One process: the limit is per loader process, and with the default workers (one per
    // CPU) the primary's round robin would spread the 4 ranks 2 and 2 over them, so no rank
    // would ever be turned away.
    loaderEnv: { SCYLLA_LOADER_MAX_STREAMS: '2', SCYLLA_LOADER_WORKERS: '1' },
    inject: async (ctx) => {
      while (!ctx.finished()) await sleep(50);
      for (const r of ctx.streams.history.reconnects) {
        if (r.code === 'RESOURCE_EXHAUSTED') ctx.fault('admission RESOURCE_EXHAUSTED');
      }
    },
  });
}
