import { mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startLocalCluster } from '../../src/devdb/index.js';
import { localClusterStatus } from '../../src/devdb/index.js';
import { stopLocalNode } from '../../src/devdb/index.js';
import type { Toxic } from '../support/index.js';
import {
  type FaultBed,
  type FaultContext,
  runScenario,
  type ScenarioResult,
  type ScenarioScale,
  type ScenarioSpec,
} from './runScenario.js';

/** A fault of the route between loader and database, in the benchmark's order. @internal */
export const DB_TOXIC_KINDS = ['reset_peer', 'timeout', 'latency', 'bandwidth'] as const;

/**
 * The toxics of one fault of the loader-to-database route, applied for a while then removed:
 * `reset_peer` resets every connection (and every new one at once, while it stays); `timeout`
 * holds all data both ways (a black hole that lets go when removed); `latency` adds 1 s each
 * way (a latency spike); `bandwidth` narrows both directions to 1 MB/s.
 */
function dbToxics(kind: (typeof DB_TOXIC_KINDS)[number]): Toxic[] {
  const both = (name: string, type: Toxic['type'], attributes: Toxic['attributes']): Toxic[] =>
    (['upstream', 'downstream'] as const).map((stream) => ({
      name: `${name}_${stream}`,
      type,
      stream,
      attributes,
    }));
  switch (kind) {
    case 'reset_peer':
      return both('reset', 'reset_peer', { timeout: 0 });
    case 'timeout':
      return both('timeout', 'timeout', { timeout: 0 });
    case 'latency':
      return [
        {
          name: 'spike_downstream',
          type: 'latency',
          stream: 'downstream',
          attributes: { latency: 1000, jitter: 0 },
        },
      ];
    case 'bandwidth':
      return both('narrow', 'bandwidth', { rate: 1000 });
  }
}

/** Puts a database-route fault on for `holdMs`, then removes it. */
async function dbFault(ctx: FaultContext, kind: string, holdMs: number): Promise<void> {
  await ctx.toxiproxy!.setToxics('db', dbToxics(kind as (typeof DB_TOXIC_KINDS)[number]));
  const over = ctx.fault(`db ${kind}`);
  await sleep(holdMs);
  await ctx.toxiproxy!.setToxics('db', []);
  over();
}

/**
 * Resets the trainers' connections in the middle of a batch: the route is first narrowed (so
 * a batch takes a good part of a second to cross it), then reset.
 */
async function resetFront(ctx: FaultContext): Promise<void> {
  const slow: Toxic = {
    name: 'slow_downstream',
    type: 'bandwidth',
    stream: 'downstream',
    attributes: { rate: 32 },
  };
  await ctx.toxiproxy!.setToxics('front', [slow]);
  await sleep(300);
  await ctx.toxiproxy!.setToxics('front', [
    slow,
    { name: 'reset', type: 'reset_peer', stream: 'downstream', attributes: { timeout: 0 } },
  ]);
  const over = ctx.fault('client reset mid-batch');
  await sleep(100);
  await ctx.toxiproxy!.setToxics('front', []);
  over();
}

/** Kills the active loader with `signal` and starts a new one (same resume key). */
async function restartLoader(ctx: FaultContext, signal: 'SIGKILL' | 'SIGTERM'): Promise<string> {
  await ctx.fleet.kill(signal);
  const over = ctx.fault(`loader ${signal}`);
  const { address } = await ctx.fleet.start();
  over();
  return address;
}

/** Injects `fault` once each share of the run is delivered; stops when the run ends first. */
async function atShares(
  ctx: FaultContext,
  shares: number[],
  fault: (i: number) => Promise<void>,
): Promise<void> {
  for (const [i, share] of shares.entries()) {
    if (!(await ctx.untilDelivered(share))) return;
    await fault(i);
  }
}

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

/** The mixed run's size: faults, epochs (defaults quick 12 and 3, long 50 and 10), seed. */
export interface MixedOptions {
  faults?: number;
  epochs?: number;
  seed?: number;
}

/** One fault scenario as data: the name `--scenarios` picks it by, its bed, its spec. */
interface FaultScenario {
  name: string;
  /** The single node, the single node through toxiproxy, or the 3-node ring. */
  bed: 'node' | 'network' | 'ring';
  spec(scale: ScenarioScale, bed: FaultBed, mixed: MixedOptions): ScenarioSpec;
}

const quick = (scale: ScenarioScale): boolean => scale === 'quick';

/**
 * Loader: 4 ranks stream while the loader is killed with `signal` mid-epoch and a new one (same
 * resume key) is started; the ranks resume on it by token. SIGTERM is the graceful path
 * (streams end with UNAVAILABLE after a 1 s grace period), SIGKILL a crash. Once quick, three
 * times long.
 */
const loaderKill = (signal: 'SIGKILL' | 'SIGTERM'): FaultScenario => ({
  name: `loader ${signal}`,
  bed: 'node',
  spec: (scale) => ({
    name: `loader ${signal} + restart`,
    // Slow enough that the 1 s grace of SIGTERM ends mid-epoch.
    stepMs: 100,
    loaderEnv: { SCYLLA_LOADER_SHUTDOWN_GRACE_MS: '1000' },
    inject: (ctx) =>
      atShares(ctx, quick(scale) ? [0.3] : [0.2, 0.45, 0.7], async () => {
        await restartLoader(ctx, signal);
      }),
  }),
});

/**
 * The disk tier of the loaders of scenario `loader SIGKILL, warm cache`: made empty when the
 * scenario starts, left for a look afterwards (the tests open it).
 *
 * @internal
 */
export const WARM_CACHE_DIR = path.join(os.tmpdir(), 'scylla-loader-fault-cache');

/**
 * Loader with a sample cache: a disk tier (shared by the loader's workers) and a memory tier.
 * The loader is SIGKILLed once the disk tier is warm (early in the job's second epoch, maybe mid
 * commit: later, a rank's rest of the job fits in its connection's buffers and the kill
 * reaches nobody) and its replacement opens the same store: the ranks resume by token and get every
 * sample once, whether its bytes came from memory, disk or the database.
 */
const warmCacheKill: FaultScenario = {
  name: 'loader SIGKILL, warm cache',
  bed: 'node',
  spec: (scale) => {
    rmSync(WARM_CACHE_DIR, { recursive: true, force: true });
    mkdirSync(WARM_CACHE_DIR, { recursive: true });
    return {
      name: 'loader SIGKILL + restart, warm disk cache',
      stepMs: 100,
      loaderEnv: {
        SCYLLA_LOADER_CACHE_DIR: WARM_CACHE_DIR,
        SCYLLA_LOADER_CACHE_MEMORY_BYTES: String(64 << 20),
      },
      inject: (ctx) =>
        atShares(ctx, quick(scale) ? [0.55] : [0.55, 0.65], async () => {
          await restartLoader(ctx, 'SIGKILL');
        }),
    };
  },
};

/**
 * Every scenario of `bench faults`, in the order they run. The tests run each by name with
 * {@link runFaultScenario}.
 *
 * @internal
 */
export const FAULT_SCENARIOS: readonly FaultScenario[] = [
  loaderKill('SIGKILL'),
  loaderKill('SIGTERM'),
  warmCacheKill,
  {
    // Two replicas share the resume key; the one the ranks use is SIGKILLed mid-epoch and they
    // go on from the other with their tokens (as a Service would send them elsewhere). Long: a
    // fresh standby is started and the hand-off repeated.
    name: 'loader hand-off',
    bed: 'node',
    spec: (scale) => {
      const at = quick(scale) ? [0.3] : [0.25, 0.6];
      return {
        name: 'loader hand-off to a replica',
        stepMs: 40,
        loaders: 2,
        inject: (ctx) =>
          atShares(ctx, at, async (i) => {
            const dying = ctx.fleet.active;
            ctx.fleet.switchTo(ctx.fleet.loaders.at(-1)!);
            await ctx.fleet.kill('SIGKILL', dying);
            ctx.fault('loader SIGKILL, replica takes over');
            if (i < at.length - 1) await ctx.fleet.start({ standby: true });
          }),
      };
    },
  },
  {
    // 4 ranks against a loader that admits 2 streams: two get RESOURCE_EXHAUSTED and retry
    // until a slot frees. Every rejection counts as an injected fault.
    name: 'admission',
    bed: 'node',
    spec: (scale) => ({
      name: 'loader admission limit (2 of 4)',
      epochs: quick(scale) ? 1 : 2,
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
    }),
  },
  // Loader to database through toxiproxy: the fault put on for 2 s, once quick, 3 times long.
  ...DB_TOXIC_KINDS.map((kind): FaultScenario => ({
    name: `db ${kind}`,
    bed: 'network',
    spec: (scale) => ({
      name: `network db: ${kind}`,
      stepMs: 40,
      proxyDb: true,
      inject: (ctx) =>
        atShares(ctx, quick(scale) ? [0.3] : [0.2, 0.45, 0.7], () => dbFault(ctx, kind, 2_000)),
    }),
  })),
  {
    // Trainer to loader through toxiproxy: connections reset while batches cross them (twice
    // quick, five times long).
    name: 'client reset',
    bed: 'network',
    spec: (scale) => {
      const resets = quick(scale) ? 2 : 5;
      return {
        name: 'network client: reset mid-batch',
        stepMs: 40,
        proxyFront: true,
        inject: (ctx) =>
          atShares(
            ctx,
            Array.from({ length: resets }, (_, i) => (i + 1) / (resets + 2)),
            () => resetFront(ctx),
          ),
      };
    },
  },
  {
    // The long run: 4 ranks over several epochs while faults of mixed kinds (loader SIGKILL and
    // SIGTERM with restart, every database-route toxic, trainer connection resets mid-batch)
    // are injected one after another, drawn from a seeded generator, with a short pause
    // between them. Toxics stay 0.5-1.5 s. The ranks train slowly until the last fault, then
    // run free, so the epochs always outlast the faults.
    name: 'mixed',
    bed: 'network',
    spec: (scale, _bed, mixed) => {
      const faults = mixed.faults ?? (quick(scale) ? 12 : 50);
      const random = mulberry32(mixed.seed ?? 1);
      const kinds = [
        ['loader SIGKILL', 2],
        ['loader SIGTERM', 1],
        ...DB_TOXIC_KINDS.map((k) => [`db ${k}`, 2] as const),
        ['client reset mid-batch', 3],
      ] as const;
      const weight = kinds.reduce((a, [, w]) => a + w, 0);
      const draw = (): string => {
        let r = random() * weight;
        for (const [kind, w] of kinds) if ((r -= w) < 0) return kind;
        return kinds[0][0];
      };
      let injected = 0;
      return {
        name: `mixed: ${faults} faults`,
        epochs: mixed.epochs ?? (quick(scale) ? 3 : 10),
        // Training keeps pace with the faults: nearly paused while the run is ahead of them,
        // so that the last fault still falls inside the last epoch. A 600 ms step was not slow
        // enough on a loaded machine: 4 ranks still took ~400 samples per fault against the
        // ~310 each had (12 faults, 3 epochs of 1,350), and the run ended after 10 faults.
        stepMs: (share) => (share > (injected + 1) / (faults + 1) ? 2000 : 60),
        loaderEnv: { SCYLLA_LOADER_SHUTDOWN_GRACE_MS: '1000' },
        proxyDb: true,
        proxyFront: true,
        inject: async (ctx) => {
          if (!(await ctx.untilDelivered(0.01))) return;
          for (let i = 0; i < faults && !ctx.finished(); i++) {
            await sleep(300 + random() * 500);
            const kind = draw();
            const hold = 500 + random() * 1000;
            injected++;
            if (kind.startsWith('loader ')) {
              const next = await restartLoader(ctx, kind.slice(7) as 'SIGKILL' | 'SIGTERM');
              await ctx.toxiproxy!.setUpstream('front', next);
            } else if (kind.startsWith('db ')) {
              await dbFault(ctx, kind.slice(3), hold);
            } else {
              await resetFront(ctx);
            }
          }
          if (ctx.finished()) ctx.log('the run ended before every fault was injected');
        },
      };
    },
  },
  {
    // A database node SIGKILLed (a crash, sockets reset) a quarter into the run, started again
    // later. With replication 3 every sample keeps two live replicas (LOCAL_QUORUM), so no trainer should wait
    // long: the longest stall is the figure to watch.
    name: 'node SIGKILL',
    bed: 'ring',
    spec: (scale, bed) => ({
      name: 'ring: node SIGKILL + restart',
      worldSize: 2,
      epochs: quick(scale) ? 1 : 2,
      stepMs: 150,
      inject: async (ctx) => {
        const stateDir = bed.ringStateDir!;
        if (!(await ctx.untilDelivered(0.25))) return;
        await stopLocalNode(stateDir, 2, { signal: 'SIGKILL' });
        ctx.fault('node SIGKILL');
        await sleep(quick(scale) ? 3_000 : 10_000);
        const t = performance.now();
        await startLocalCluster({ stateDir, timeoutMs: 240_000 });
        ctx.log(`node 2 back after ${((performance.now() - t) / 1000).toFixed(1)} s`);
      },
    }),
  },
  {
    // A node SIGSTOPped, then SIGCONTed. A hung node keeps its connections open and answers
    // nothing, which no socket error reveals: only the loader's hedged second reads to the
    // other replica keep the trainers fed, so the longest stall measures the hedging.
    name: 'node SIGSTOP',
    bed: 'ring',
    spec: (scale, bed) => {
      const hangMs = quick(scale) ? 6_000 : 20_000;
      return {
        name: `ring: node SIGSTOP ${hangMs / 1000} s`,
        worldSize: 2,
        epochs: quick(scale) ? 1 : 2,
        // The hang must fall inside the run: a slower step stretches the epoch past it.
        stepMs: quick(scale) ? 60 : 120,
        inject: async (ctx) => {
          const stateDir = bed.ringStateDir!;
          if (!(await ctx.untilDelivered(0.2))) return;
          const pid = (await localClusterStatus(stateDir)).nodes[2]?.pid;
          if (!pid) throw new Error(`node 3 of ${stateDir} is not running`);
          process.kill(pid, 'SIGSTOP');
          ctx.fault('node SIGSTOP');
          try {
            await sleep(hangMs);
          } finally {
            process.kill(pid, 'SIGCONT');
          }
        },
      };
    },
  },
  {
    // Every node restarted in turn (SIGTERM, wait for the exit, start, wait until it serves)
    // during one epoch, as an upgrade does. At every moment one node is down or rejoining.
    name: 'rolling restart',
    bed: 'ring',
    spec: (scale, bed) => ({
      name: 'ring: rolling restart',
      worldSize: 2,
      epochs: 1,
      batchSize: 8,
      // Three restarts take a minute or more here: the epoch must outlast them (the step
      // ends, and the rest of the epoch runs free, once the last node is back).
      stepMs: quick(scale) ? 1000 : 1500,
      inject: async (ctx) => {
        const stateDir = bed.ringStateDir!;
        // Once the epoch is under way: its pace, not this share, makes it outlast the restarts.
        if (!(await ctx.untilDelivered(quick(scale) ? 0.01 : 0.05))) return;
        for (const node of [1, 2, 3]) {
          const t = performance.now();
          await stopLocalNode(stateDir, node, { signal: 'SIGTERM', graceMs: 20_000 });
          ctx.fault('node restart');
          await startLocalCluster({ stateDir, timeoutMs: 240_000 });
          ctx.log(`node ${node} restarted in ${((performance.now() - t) / 1000).toFixed(1)} s`);
          if (ctx.finished()) ctx.log('the epoch ended before the rolling restart did');
        }
      },
    }),
  },
];

/**
 * Runs the scenario of `FAULT_SCENARIOS` named `name` on `bed`; `mixed` sizes the mixed run.
 *
 * @internal
 */
export function runFaultScenario(
  bed: FaultBed,
  name: string,
  scale: ScenarioScale,
  mixed: MixedOptions = {},
): Promise<ScenarioResult> {
  const scenario = FAULT_SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`no fault scenario '${name}'`);
  if (scenario.bed === 'ring' && !bed.ringStateDir) {
    throw new Error('node fault scenarios need a local ring (ringStateDir)');
  }
  return runScenario(bed, scenario.spec(scale, bed, mixed));
}
