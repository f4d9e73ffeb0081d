import type cassandra from 'cassandra-driver';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DbConfig } from '../../src/core/index.js';
import { startToxiproxy, type Toxiproxy } from '../support/index.js';
import { checkHistory, type Verdict } from './checkHistory.js';
import { LoaderFleet } from './LoaderFleet.js';
import type { FaultDataset } from './prepareFaultDataset.js';
import { readSplitIds } from './readSplitIds.js';
import { type CheckedStreams, runCheckedStreams } from './runCheckedStreams.js';

/**
 * How long a scenario runs: `quick` for the integration tests and `bench faults --quick`
 * (each well under a minute), `long` for the benchmark's figures.
 *
 * @internal
 */
export type ScenarioScale = 'quick' | 'long';

/**
 * Where fault scenarios run: the database the loaders read from, the checker's own driver
 * client to it (for the ground truth), the dataset, and for the node faults the local ring's
 * state folder.
 *
 * @internal
 */
export interface FaultBed {
  db: DbConfig;
  /** The checker's client of the same database (reads the split's ids). */
  client: cassandra.Client;
  data: FaultDataset;
  /** State folder of the local ring whose nodes the node scenarios stop and hang. */
  ringStateDir?: string;
  /** Path of `toxiproxy-server`, for the network scenarios. */
  toxiproxy?: string;
  log: (line: string) => void;
}

/** What a fault scenario did and what the checker made of it. @internal */
export interface ScenarioResult {
  scenario: string;
  /** Faults injected, by kind (e.g. `node SIGKILL`, `db reset_peer`). */
  faults: Record<string, number>;
  faultCount: number;
  verdict: Verdict;
  /** Loader exits that were not injected, and why they exited. */
  loaderCrashes: number;
  crashDetails: string[];
  /** Distinct loader processes the run used. */
  loaders: number;
  /** Worker processes of each loader (`serve --workers N`; 1 when it serves alone). */
  workersPerLoader: number;
  /** Workers (or ports) that outlived their loader's exit; see `LoaderFleet.orphans`. */
  orphans: number;
  orphanDetails: string[];
  /** The three longest waits between batches (when, which rank): where the stalls were. */
  longestWaits: { rank: number; epoch: number; atMs: number; ms: number }[];
  /** When each fault was on, ms from the start of the streams (an instant one ends at once). */
  faultWindows: { kind: string; fromMs: number; toMs: number }[];
  /**
   * The longest wait between batches less its time under a fault: what the loader added after
   * the fault was over (or beside it, for faults it should route around).
   */
  longestStallPastFaultMs: number;
  /** Why calls broke (code and details), the most frequent first, with counts and first times. */
  reconnectCauses: { cause: string; count: number; firstAtMs: number }[];
  seconds: number;
}

/** What a scenario's injector may do while the ranks stream. @internal */
export interface FaultContext {
  bed: FaultBed;
  fleet: LoaderFleet;
  streams: CheckedStreams;
  /** The scenario's toxiproxy (proxies `db` and, with `proxyFront`, `front`). */
  toxiproxy: Toxiproxy | undefined;
  /**
   * Resolves true once this share (0..1) of all the samples the run will deliver has arrived,
   * false if the run ended first (then the fault would not be mid-epoch: skip it).
   */
  untilDelivered(share: number): Promise<boolean>;
  /**
   * Counts one injected fault of `kind`, starting now; call what it returns when the fault is
   * over (a route's toxics removed, a loader's replacement serving). A fault left unended is
   * an instant: the loader is expected to route around it (a node killed or hung in a ring).
   */
  fault(kind: string): () => void;
  /** Whether every rank has finished. */
  finished(): boolean;
  log(line: string): void;
}

/** One fault scenario: the job it streams and the faults it injects. @internal */
export interface ScenarioSpec {
  name: string;
  /** Ranks (default 4), epochs (default 2) and batch size (default 16) of the job. */
  worldSize?: number;
  epochs?: number;
  batchSize?: number;
  /**
   * The trainers' step while faults are injected, ms, or a function of the share (0..1) of the
   * run delivered so far; once `inject` returns, 0.
   */
  stepMs: number | ((deliveredShare: number) => number);
  /** Environment of every loader (limits, grace period). */
  loaderEnv?: NodeJS.ProcessEnv;
  /** Loaders started before streaming (default 1; more are standby replicas). */
  loaders?: number;
  /** The loaders reach the database through toxiproxy's `db` proxy. */
  proxyDb?: boolean;
  /** The trainers reach the loader through toxiproxy's `front` proxy. */
  proxyFront?: boolean;
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
  const { worldSize = 4, epochs = 2, batchSize = 16 } = spec;
  const splitIds = await readSplitIds(bed.client, bed.data.dataset, bed.data.split);
  const proxy = spec.proxyDb || spec.proxyFront ? await startDbProxy(bed) : undefined;
  const log = (line: string): void => bed.log(`[${spec.name}] ${line}`);
  const fleet = new LoaderFleet({
    db: spec.proxyDb ? proxy!.db : bed.db,
    env: { SCYLLA_LOADER_LOG_LEVEL: 'info', ...spec.loaderEnv },
    log,
  });
  const faults: Record<string, number> = {};
  const windows: ScenarioResult['faultWindows'] = [];
  try {
    for (let i = 0; i < (spec.loaders ?? 1); i++) await fleet.start({ standby: i > 0 });
    const front = spec.proxyFront
      ? `127.0.0.1:${await proxy!.toxiproxy.createProxy('front', fleet.address())}`
      : undefined;
    let injecting = true;
    const abort = new AbortController();
    const total = splitIds.size * epochs;
    const streams = runCheckedStreams({
      address: front ? () => front : () => fleet.address(),
      dataset: bed.data.dataset,
      split: bed.data.split,
      batchSize,
      seed: 42,
      epochs,
      worldSize,
      stepMs: () => {
        if (!injecting) return 0;
        const step = spec.stepMs;
        return typeof step === 'number' ? step : step(streams.delivered() / total);
      },
      deadlineMs: 300_000,
      signal: abort.signal,
    });
    let finished = false;
    void streams.done.then(() => (finished = true));
    const ctx: FaultContext = {
      bed,
      fleet,
      streams,
      toxiproxy: proxy?.toxiproxy,
      untilDelivered: async (share) => {
        while (!finished && streams.delivered() < share * total) await sleep(20);
        return !finished;
      },
      fault: (kind) => {
        faults[kind] = (faults[kind] ?? 0) + 1;
        log(`fault ${kind} at ${streams.delivered()}/${total} samples`);
        const window = { kind, fromMs: performance.now() - streams.startedAt, toMs: 0 };
        window.toMs = window.fromMs;
        windows.push(window);
        return () => {
          window.toMs = performance.now() - streams.startedAt;
        };
      },
      finished: () => finished,
      log,
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
    const verdict = checkHistory(history, { splitIds, firstEpoch: 0, epochs });
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
      faultWindows: windows,
      reconnectCauses: reconnectCauses(history.reconnects),
      longestStallPastFaultMs: history.waits.reduce(
        (max, w) => Math.max(max, w.ms - overlapMs(w.atMs - w.ms, w.atMs, windows)),
        0,
      ),
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await fleet.stopAll();
    await proxy?.toxiproxy.stop();
  }
}

/**
 * Starts toxiproxy with a `db` proxy to the bed's (single) database node. One node only: the
 * driver would find a ring's other nodes through `system.peers` and connect to them directly,
 * around the proxy.
 */
async function startDbProxy(bed: FaultBed): Promise<{ toxiproxy: Toxiproxy; db: DbConfig }> {
  if (!bed.toxiproxy) throw new Error('network scenarios need toxiproxy-server (bed.toxiproxy)');
  const toxiproxy = await startToxiproxy(bed.toxiproxy);
  try {
    const upstream = `${bed.db.contactPoints[0] ?? '127.0.0.1'}:${bed.db.port}`;
    const port = await toxiproxy.createProxy('db', upstream);
    return { toxiproxy, db: { ...bed.db, contactPoints: ['127.0.0.1'], port } };
  } catch (err) {
    await toxiproxy.stop();
    throw err;
  }
}

/** How much of [from, to] lies under one fault window or more (overlapping windows merged). */
export function overlapMs(
  from: number,
  to: number,
  windows: readonly { fromMs: number; toMs: number }[],
): number {
  const clipped = windows
    .map((w) => [Math.max(from, w.fromMs), Math.min(to, w.toMs)] as const)
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let reached = from;
  for (const [a, b] of clipped) {
    const start = Math.max(a, reached);
    if (b > start) covered += b - start;
    reached = Math.max(reached, b);
  }
  return covered;
}

/** The reconnects of a history grouped by cause (code and details), most frequent first. */
function reconnectCauses(
  reconnects: readonly { code: string; details: string; atMs: number }[],
): ScenarioResult['reconnectCauses'] {
  const byCause = new Map<string, { cause: string; count: number; firstAtMs: number }>();
  for (const r of reconnects) {
    const cause = `${r.code}: ${r.details.slice(0, 160)}`;
    const entry = byCause.get(cause) ?? { cause, count: 0, firstAtMs: r.atMs };
    entry.count++;
    entry.firstAtMs = Math.min(entry.firstAtMs, r.atMs);
    byCause.set(cause, entry);
  }
  return [...byCause.values()].sort((a, b) => b.count - a.count);
}
