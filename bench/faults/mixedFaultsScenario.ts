import { setTimeout as sleep } from 'node:timers/promises';
import { SLOW_FRONT } from './clientResetScenario.js';
import { DB_TOXIC_KINDS, dbToxics } from './dbToxics.js';
import type { FaultBed } from './FaultBed.js';
import { runScenario } from './runScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import { startFaultProxies } from './startFaultProxies.js';

/** Kinds of fault the mixed run draws from, with their weights. */
const KINDS = [
  ['loader SIGKILL', 2],
  ['loader SIGTERM', 1],
  ...DB_TOXIC_KINDS.map((k) => [`db ${k}`, 2] as const),
  ['client reset mid-batch', 3],
] as const;

/** A small seeded generator, so a run's sequence of faults can be replayed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The long run: 4 ranks over several epochs while `faults` faults of mixed kinds (loader
 * SIGKILL and SIGTERM with restart, every database-route toxic, trainer connection resets
 * mid-batch) are injected one after another, drawn from a seeded generator, with a short
 * pause between them. Toxics stay 0.5-1.5 s. The ranks train slowly until the last fault, then
 * run free, so the epochs always outlast the faults.
 *
 * @internal
 */
export async function mixedFaultsScenario(
  bed: FaultBed,
  options: { faults: number; epochs: number; seed?: number },
): Promise<ScenarioResult> {
  const proxies = await startFaultProxies(bed);
  const random = mulberry32(options.seed ?? 1);
  const weight = KINDS.reduce((a, [, w]) => a + w, 0);
  const draw = (): string => {
    let r = random() * weight;
    for (const [kind, w] of KINDS) if ((r -= w) < 0) return kind;
    return KINDS[0][0];
  };
  let front = '';
  let injected = 0;
  try {
    return await runScenario(bed, {
      name: `mixed: ${options.faults} faults`,
      worldSize: 4,
      epochs: options.epochs,
      batchSize: 16,
      // Training keeps pace with the faults: nearly paused while the run is ahead of them, so
      // that the last fault still falls inside the last epoch. A 600 ms step was not slow
      // enough on a loaded machine: 4 ranks still took ~400 samples per fault against the
      // ~310 each had (12 faults, 3 epochs of 1,350), and the run ended after 10 faults.
      stepMs: (share) => (share > (injected + 1) / (options.faults + 1) ? 2000 : 60),
      loaderDb: proxies.db,
      loaderEnv: { SCYLLA_LOADER_SHUTDOWN_GRACE_MS: '1000' },
      address: () => () => front,
      beforeStreams: async (fleet) => {
        front = await proxies.front(fleet.address());
      },
      inject: async (ctx) => {
        if (!(await ctx.untilDelivered(0.01))) return;
        for (let i = 0; i < options.faults && !ctx.finished(); i++) {
          await sleep(300 + random() * 500);
          const kind = draw();
          const hold = 500 + random() * 1000;
          injected++;
          if (kind.startsWith('loader ')) {
            await ctx.fleet.kill(kind === 'loader SIGKILL' ? 'SIGKILL' : 'SIGTERM');
            ctx.fault(kind);
            const next = await ctx.fleet.start();
            await proxies.toxiproxy.setUpstream('front', next.address);
          } else if (kind.startsWith('db ')) {
            const toxic = kind.slice(3) as (typeof DB_TOXIC_KINDS)[number];
            await proxies.toxiproxy.setToxics('db', dbToxics(toxic));
            ctx.fault(kind);
            await sleep(hold);
            await proxies.toxiproxy.setToxics('db', []);
          } else {
            await proxies.toxiproxy.setToxics('front', [SLOW_FRONT]);
            await sleep(300);
            await proxies.toxiproxy.setToxics('front', [
              SLOW_FRONT,
              {
                name: 'reset',
                type: 'reset_peer',
                stream: 'downstream',
                attributes: { timeout: 0 },
              },
            ]);
            ctx.fault(kind);
            await sleep(100);
            await proxies.toxiproxy.setToxics('front', []);
          }
        }
        if (ctx.finished()) ctx.log('the run ended before every fault was injected');
      },
    });
  } finally {
    await proxies.stop();
  }
}
