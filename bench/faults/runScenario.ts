import { setTimeout as sleep } from 'node:timers/promises';
import type { DbConfig } from '../../src/core/index.js';
import { checkHistory } from './checkHistory.js';
import type { FaultBed } from './FaultBed.js';
import { LoaderFleet } from './LoaderFleet.js';
import { readSplitIds } from './readSplitIds.js';
import { type CheckedStreams, runCheckedStreams } from './runCheckedStreams.js';
import type { ScenarioResult } from './ScenarioResult.js';

/** What a scenario's injector may do while the ranks stream. @internal */
export interface FaultContext {
  fleet: LoaderFleet;
  streams: CheckedStreams;
  /**
   * Resolves true once this share (0..1) of all the samples the run will deliver has arrived,
   * false if the run ended first (then the fault would not be mid-epoch: skip it).
   */
  untilDelivered(share: number): Promise<boolean>;
  /** Counts one injected fault of `kind`. */
  fault(kind: string): void;
  /** Whether every rank has finished. */
  finished(): boolean;
  log(line: string): void;
}

/** One fault scenario: the job it streams and the faults it injects. @internal */
export interface ScenarioSpec {
  name: string;
  worldSize: number;
  epochs: number;
  batchSize: number;
  /**
   * The trainers' step while faults are injected, ms, or a function of the share (0..1) of the
   * run delivered so far; once `inject` returns, 0.
   */
  stepMs: number | ((deliveredShare: number) => number);
  /** Environment of every loader (limits, grace period). */
  loaderEnv?: NodeJS.ProcessEnv;
  /** The database as the loaders see it (default the bed's; e.g. a proxy in front of it). */
  loaderDb?: DbConfig;
  /** Loaders started before streaming (default 1; more are standby replicas). */
  loaders?: number;
  /** Where the trainers call (default the fleet's active loader; e.g. a proxy before it). */
  address?: (fleet: LoaderFleet) => () => string;
  /** A call that delivers nothing for this long is resumed by the checker (default 30 s). */
  idleTimeoutMs?: number;
  /** Runs once the loaders serve, before any rank streams (e.g. to put a proxy before one). */
  beforeStreams?: (fleet: LoaderFleet) => Promise<void>;
  inject(ctx: FaultContext): Promise<void>;
}

/**
 * Runs one scenario on a bed: starts the loaders, streams the job's ranks through the
 * checker's client while `inject` runs, then checks the history against the split read from
 * the database, and ends every loader. The verdict is returned, not asserted: the tests assert
 * it, the benchmark tabulates it.
 *
 * @internal
 */
export async function runScenario(bed: FaultBed, spec: ScenarioSpec): Promise<ScenarioResult> {
  const started = performance.now();
  const splitIds = await readSplitIds(bed.client, bed.data.dataset, bed.data.split);
  const fleet = new LoaderFleet({
    db: spec.loaderDb ?? bed.db,
    env: { SCYLLA_LOADER_LOG_LEVEL: 'info', ...spec.loaderEnv },
    ...(bed.onSpawn ? { onSpawn: bed.onSpawn } : {}),
    log: (line) => bed.log(`[${spec.name}] ${line}`),
  });
  const faults: Record<string, number> = {};
  try {
    for (let i = 0; i < (spec.loaders ?? 1); i++) await fleet.start({ standby: i > 0 });
    await spec.beforeStreams?.(fleet);
    let injecting = true;
    const abort = new AbortController();
    const total = splitIds.size * spec.epochs;
    const streams = runCheckedStreams({
      address: spec.address ? spec.address(fleet) : () => fleet.address(),
      dataset: bed.data.dataset,
      split: bed.data.split,
      batchSize: spec.batchSize,
      seed: 42,
      firstEpoch: 0,
      epochs: spec.epochs,
      worldSize: spec.worldSize,
      stepMs: () => {
        if (!injecting) return 0;
        const step = spec.stepMs;
        return typeof step === 'number' ? step : step(streams.delivered() / total);
      },
      ...(spec.idleTimeoutMs ? { idleTimeoutMs: spec.idleTimeoutMs } : {}),
      deadlineMs: 300_000,
      signal: abort.signal,
    });
    let finished = false;
    void streams.done.then(() => (finished = true));
    const ctx: FaultContext = {
      fleet,
      streams,
      untilDelivered: async (share) => {
        while (!finished && streams.delivered() < share * total) await sleep(20);
        return !finished;
      },
      fault: (kind) => {
        faults[kind] = (faults[kind] ?? 0) + 1;
        bed.log(`[${spec.name}] fault ${kind} at ${streams.delivered()}/${total} samples`);
      },
      finished: () => finished,
      log: (line) => bed.log(`[${spec.name}] ${line}`),
    };
    try {
      await spec.inject(ctx);
    } catch (err) {
      // A broken injector must not leave the ranks reconnecting for minutes.
      abort.abort();
      await streams.done;
      throw err;
    } finally {
      injecting = false;
    }
    const history = await streams.done;
    // Stopped here, not only in `finally`, so workers outliving their loader are counted.
    await fleet.stopAll();
    const verdict = checkHistory(history, { splitIds, firstEpoch: 0, epochs: spec.epochs });
    return {
      scenario: spec.name,
      faults,
      faultCount: Object.values(faults).reduce((a, b) => a + b, 0),
      verdict,
      loaderCrashes: fleet.crashes.length,
      crashDetails: fleet.crashes.map((c) => `${c.pid} ${c.exit}: ${c.output.slice(-600)}`),
      loaders: fleet.loaders.length,
      workersPerLoader: Math.max(1, ...fleet.loaders.map((l) => l.workers.length)),
      orphans: fleet.orphans.length,
      orphanDetails: fleet.orphans.map((o) => `${o.pid} of ${o.primary} after ${o.after}`),
      longestWaits: [...history.waits].sort((a, b) => b.ms - a.ms).slice(0, 3),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await fleet.stopAll();
  }
}
