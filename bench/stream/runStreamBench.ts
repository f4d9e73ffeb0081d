import { setTimeout as sleep } from 'node:timers/promises';
import { serverConfigSchema } from '../../src/server/index.js';
import { createDbClient } from '../../src/core/index.js';
import { pinProcess, resolvePlacements } from './pinning.js';
import { runLayoutBench } from './layoutBench.js';
import { preparePhotoBench } from '../dataset/benchDataset.js';
import { cpuMeter, withDbClient } from '../../test/support/index.js';
import type { SdkClientConfig, SdkClientResult } from './sdkClientChild.js';
import { startServeProcess, warmUpLoader, type ServeProcess } from './serveProcess.js';
import { startBenchChild } from './startBenchChild.js';
import { measureLoaderRun } from '../measure/measureLoaderRun.js';
import type { Placement } from './StreamBenchOptions.js';
import type { StreamBenchOptions } from './resolveStreamBenchOptions.js';
import type { RunRecord, ScenarioName } from './StreamBenchReport.js';
import { summarizeRuns } from './summarizeRuns.js';
import type { TightLoopConfig, TightLoopResult } from './tightLoopChild.js';
import { startBenchRun } from '../report/benchRun.js';
import { prepareMixSplits, type MixSplits } from './prepareMixSplits.js';
import { summarizeMixing } from './summarizeMixing.js';
import { BENCH_COLUMNS, prepareBenchColumns, summarizeColumns } from './benchColumns.js';
import {
  benchJobId,
  benchLedgerKeyspace,
  dropLedgerKeyspace,
  LEDGER_RATE_GOALS,
  measureBenchLedger,
  summarizeLedger,
  type LedgerSize,
} from './benchLedger.js';

/** A service scenario: how the SDK client asks for the stream. */
interface ServiceScenario {
  scenario: ScenarioName;
  ordering: 'out-of-order' | 'in-order';
  prefetch?: number;
  /** Streams the mixture of `--sources` instead of split `all`. */
  mixed?: boolean;
  /** Asks for the metadata columns of `--columns`. */
  columns?: boolean;
  /** Names a job (`--ledger`): the loader records the stream in its training ledger. */
  ledger?: boolean;
}

const SERVICE_SCENARIOS: ServiceScenario[] = [
  { scenario: 'service', ordering: 'out-of-order' },
  { scenario: 'service-in-order-p2', ordering: 'in-order', prefetch: 2 },
];
const GROUPED_SCENARIO: ServiceScenario = { scenario: 'service-grouped', ordering: 'out-of-order' };
const MIXED_SCENARIO: ServiceScenario = {
  scenario: 'service-mixed',
  ordering: 'out-of-order',
  mixed: true,
};
const COLUMNS_SCENARIO: ServiceScenario = {
  scenario: 'service-columns',
  ordering: 'out-of-order',
  columns: true,
};
const LEDGER_SCENARIO: ServiceScenario = {
  scenario: 'service-ledger',
  ordering: 'out-of-order',
  ledger: true,
};

/**
 * The streaming benchmark of the issue: ~100 kB JPEG samples in batches of `batchSize`,
 * streamed through a real `serve` process and the client SDK in another process, against a
 * tight loop that reads the same ids with the same driver directly (no gRPC) at its best
 * concurrency. Scenarios run `runs` times interleaved (tight loop, service, service in order
 * with prefetch 2, then again), in each placement: unpinned, and pinned (the database node on
 * one CPU, loader and client on another, so the comparison shows whether the loader keeps up
 * with the database rather than who wins shared cores). CPU seconds of the database and the
 * loader come from `/proc/<pid>/stat` around the measured part only; the children measure
 * their own. The database's CPU affinity is restored whatever happens.
 *
 * With `mixWeights` (`--sources`), the same loader also streams a mixture of that many parts
 * of the dataset (a split set made for it, parts sized by the weights) weighted by them, as
 * many samples as the single-source service: `service-mixed`, run right before or after
 * `service` in every round (alternately), so each round pairs the two ({@link summarizeMixing}).
 * `columns` (`--columns`) and `ledger` (`--ledger`) pair the same way: the service with two
 * metadata columns, and the service naming a job (unique per round; the loader records into
 * keyspace `<dataset>_ledger`, whose size per sample is measured after the runs and which is
 * dropped after).
 *
 * Also runs the batch-layout micro-benchmark, and writes the whole report as JSON to
 * `outDir/stream-<timestamp>.json`.
 */
export async function runStreamBench(options: StreamBenchOptions) {
  const { log, signal, progress, childPids, onSpawn, writeReport } = startBenchRun(options);
  const notes: string[] = [];

  const resolved = await resolvePlacements(options.placements, options.dbPid, log);
  const { placements, pinning } = resolved;
  notes.push(...resolved.notes);

  const { environment, dataset } = await preparePhotoBench({
    ...options,
    progress,
    log,
  });

  let mix: MixSplits | undefined;
  const ledgerKeyspace = options.ledger ? benchLedgerKeyspace(options.dataset) : undefined;
  // Tells this run's jobs apart from another run's, should a keyspace outlive its run.
  const runTag = Date.now().toString(36);
  if (options.mixWeights || options.columns || ledgerKeyspace) {
    const client = await createDbClient(options.db);
    try {
      if (options.mixWeights) {
        mix = await prepareMixSplits(client, options.dataset, options.mixWeights, { log, signal });
      }
      if (options.columns) await prepareBenchColumns(client, options.dataset, log);
      // A killed run's rows would count as this run's.
      if (ledgerKeyspace) await dropLedgerKeyspace(client, ledgerKeyspace);
    } finally {
      await client.shutdown();
    }
  }

  log(`batch layout micro-benchmark: ${options.layoutIterations} iterations per layout`);
  const layout = runLayoutBench({
    samples: options.batchSize,
    sampleBytes: Math.round(dataset.meanBytes),
    iterations: options.layoutIterations,
  });

  const serverDefaults = serverConfigSchema.parse({ db: {} });
  const calibrate = options.concurrencies.length > 1;
  const grouped = options.groupReads;
  const perPlacement =
    (calibrate ? options.concurrencies.length * (grouped === undefined ? 1 : 2) : 0) +
    options.runs *
      (1 +
        SERVICE_SCENARIOS.length +
        (grouped === undefined ? 0 : 2) +
        (mix ? 1 : 0) +
        (options.columns ? 1 : 0) +
        (options.ledger ? 1 : 0));
  const bar = progress('bench stream', perPlacement * placements.length, 'runs');
  const runs: RunRecord[] = [];
  const bestConcurrency: Partial<Record<Placement, number>> = {};
  const bestGroupedConcurrency: Partial<Record<Placement, number>> = {};
  const loaderStreamEnds: Partial<Record<Placement, Record<string, unknown>[]>> = {};
  let ledgerSize: LedgerSize | undefined;
  /** Samples the loaders' ledger warm-ups recorded (besides the job runs'). */
  let ledgerWarmupSamples = 0;
  const record = (r: RunRecord): void => {
    runs.push(r);
    bar.update(runs.length);
    const extra = r.waitMs
      ? `, batch wait p50 ${r.waitMs.p50.toFixed(1)} / p99 ${r.waitMs.p99.toFixed(1)} ms`
      : '';
    bar.log(
      `${r.placement} ${r.phase === 'calibration' ? 'calibration ' : ''}${scenarioLabel(r)} ` +
        `run ${r.run + 1}: ${Math.round(r.samplesPerSecond)} samples/s, ` +
        `${r.megabytesPerSecond.toFixed(0)} MB/s${extra}`,
    );
  };

  try {
    for (const placement of placements) {
      const cpus = placement === 'pinned' ? pinning?.loaderAndClient : undefined;
      const restore =
        placement === 'pinned' && pinning && options.dbPid !== undefined
          ? await pinProcess(options.dbPid, pinning.database)
          : async () => undefined;
      try {
        // Each tight loop at its own best: grouped reads move more samples per query, so
        // their best count of samples in flight is calibrated apart.
        const calibrateLoop = async (groupReads: number | undefined): Promise<number> => {
          let best = options.concurrencies[0]!;
          if (!calibrate) return best;
          let bestRate = 0;
          for (const [i, concurrency] of options.concurrencies.entries()) {
            signal?.throwIfAborted();
            const r = await runTightLoop(options, {
              placement,
              phase: 'calibration',
              run: i,
              concurrency,
              seed: 1000 + i,
              cpus,
              onSpawn,
              ...(groupReads === undefined ? {} : { groupReads }),
            });
            record(r);
            if (r.samplesPerSecond > bestRate) {
              bestRate = r.samplesPerSecond;
              best = concurrency;
            }
          }
          bar.log(
            `${placement}: tight loop${groupReads === undefined ? '' : ' grouped'} keeps ` +
              `concurrency ${best}`,
          );
          return best;
        };
        const best = await calibrateLoop(undefined);
        const bestGrouped = grouped === undefined ? best : await calibrateLoop(grouped);
        bestConcurrency[placement] = best;
        if (grouped !== undefined) bestGroupedConcurrency[placement] = bestGrouped;

        // With grouped scenarios, the plain loader reads one row per sample whatever the
        // dataset's size (its default, auto, would group small samples), and a second loader
        // groups: each pair compares like with like. One loader process each: its CPU is what
        // the table reports (workers of a cluster primary are its children, whose CPU its own
        // figures leave out).
        const startLoader = (env: Record<string, string>): Promise<ServeProcess> =>
          startServeProcess({
            db: options.db,
            ...(cpus === undefined ? {} : { cpus }),
            env: {
              SCYLLA_LOADER_WORKERS: '1',
              ...(ledgerKeyspace ? { SCYLLA_LOADER_LEDGER_KEYSPACE: ledgerKeyspace } : {}),
              ...env,
            },
            onSpawn,
          });
        const serve = await startLoader(
          grouped === undefined ? {} : { SCYLLA_LOADER_GROUP_READS: 'off' },
        );
        loaderStreamEnds[placement] = serve.streamEnds;
        let groupedServe: ServeProcess | undefined;
        try {
          await warmUpLoader(serve, options);
          // The ledger's keyspace and tables are made by the first stream naming a job: not in
          // a measured round (a node settles for a while after a schema change), as in
          // production, where they are made once and every later job finds them.
          if (ledgerKeyspace) {
            ledgerWarmupSamples += await warmUpLoader(serve, {
              ...options,
              jobId: benchJobId(runTag, placement, 'warmup'),
            });
          }
          if (grouped !== undefined) {
            groupedServe = await startLoader({
              SCYLLA_LOADER_GROUP_READS: 'on',
              SCYLLA_LOADER_GROUP_READS_SIZE: String(grouped),
            });
            await warmUpLoader(groupedServe, options);
          }
          const loops: { concurrency: number; groupReads?: number }[] = [
            { concurrency: best },
            ...(grouped === undefined ? [] : [{ concurrency: bestGrouped, groupReads: grouped }]),
          ];
          const services: [ServeProcess, ServiceScenario][] = [
            ...SERVICE_SCENARIOS.map((sc): [ServeProcess, ServiceScenario] => [serve, sc]),
            ...(groupedServe === undefined
              ? []
              : [[groupedServe, GROUPED_SCENARIO] as [ServeProcess, ServiceScenario]]),
          ];
          // The mixture runs next to the single-source service it is compared with, first in
          // odd rounds, so neither always finds the other's traces (database caches, heap).
          const inRound = (run: number): [ServeProcess, ServiceScenario][] => {
            const paired: [ServeProcess, ServiceScenario][] = [
              ...(mix ? [[serve, MIXED_SCENARIO] as [ServeProcess, ServiceScenario]] : []),
              ...(options.columns
                ? [[serve, COLUMNS_SCENARIO] as [ServeProcess, ServiceScenario]]
                : []),
              ...(options.ledger
                ? [[serve, LEDGER_SCENARIO] as [ServeProcess, ServiceScenario]]
                : []),
            ];
            if (paired.length === 0) return services;
            const group = [services[0]!, ...paired];
            return [...(run % 2 === 0 ? group : group.reverse()), ...services.slice(1)];
          };
          for (let run = 0; run < options.runs; run++) {
            signal?.throwIfAborted();
            const background = await backgroundCpuPerSecond(options.dbPid);
            const place = {
              placement,
              run,
              cpus,
              onSpawn,
              jobId: benchJobId(runTag, placement, run),
            };
            for (const loop of loops) {
              const r = await runTightLoop(options, {
                ...place,
                ...loop,
                phase: 'timed',
                seed: run,
              });
              record(withBackground(r, background));
            }
            for (const [loader, scenario] of inRound(run)) {
              signal?.throwIfAborted();
              record(
                withBackground(await runService(options, loader, scenario, place, mix), background),
              );
            }
          }
        } finally {
          await serve.stop();
          await groupedServe?.stop();
          if (groupedServe) {
            loaderStreamEnds[placement] = [...serve.streamEnds, ...groupedServe.streamEnds];
          }
        }
      } finally {
        await restore();
      }
    }
    if (ledgerKeyspace) {
      bar.log(`bench stream --ledger: measuring keyspace ${ledgerKeyspace}`);
      ledgerSize = await withDbClient(options.db, (client) =>
        measureBenchLedger(client, ledgerKeyspace, options.dbPid, runs, ledgerWarmupSamples),
      );
      if (ledgerSize.diskNote) notes.push(`ledger: ${ledgerSize.diskNote}`);
    }
  } finally {
    bar.stop();
    // Not failing the run for it (nor hiding why the run failed): the note says what is left.
    if (ledgerKeyspace) {
      await withDbClient(options.db, (client) => dropLedgerKeyspace(client, ledgerKeyspace)).catch(
        (err: unknown) => {
          const note = `could not drop keyspace ${ledgerKeyspace} (drop it by hand): ${String(err)}`;
          notes.push(note);
          log(note);
        },
      );
    }
  }

  return writeReport('stream', options.outDir, {
    environment,
    settings: {
      samples: options.samples,
      runs: options.runs,
      batchSize: options.batchSize,
      concurrencies: options.concurrencies,
      placements,
      connectionsPerHost: options.db.connectionsPerHost,
      serverDefaultPrefetch: serverDefaults.defaultPrefetch,
      serverMaxInFlightPerStream: serverDefaults.maxInFlightPerStream,
      ...(grouped === undefined ? {} : { groupReads: grouped }),
      ...(pinning && placements.includes('pinned') ? { pinning } : {}),
      ...(mix ? { mix } : {}),
      ...(options.columns ? { columns: Object.keys(BENCH_COLUMNS) } : {}),
      payload: options.payload,
    },
    dataset,
    bestConcurrency,
    ...(grouped === undefined ? {} : { bestGroupedConcurrency }),
    runs,
    summary: summarizeRuns(runs, placements),
    ...(mix ? { mixing: summarizeMixing(runs, placements) } : {}),
    ...(options.columns ? { columns: summarizeColumns(runs, placements) } : {}),
    ...(ledgerKeyspace && ledgerSize
      ? {
          ledger: {
            keyspace: ledgerKeyspace,
            goal: LEDGER_RATE_GOALS[options.payload],
            rows: summarizeLedger(runs, placements, options.payload),
            size: ledgerSize,
          },
        }
      : {}),
    layout,
    loaderStreamEnds,
    childPids,
    notes,
  });
}

/**
 * CPU seconds per second the database uses while nothing of the benchmark runs (one second's
 * sample): on a shared node, other clients' load, which the database's figures then include.
 */
async function backgroundCpuPerSecond(dbPid: number | undefined): Promise<number | undefined> {
  if (dbPid === undefined) return undefined;
  const meter = cpuMeter({ db: dbPid });
  const t0 = performance.now();
  await sleep(1000);
  const used = meter()['db'];
  return used === undefined ? undefined : used / ((performance.now() - t0) / 1000);
}

function withBackground(r: RunRecord, background: number | undefined): RunRecord {
  if (background === undefined || r.cpuSeconds.db === undefined) return r;
  return {
    ...r,
    cpuSeconds: { ...r.cpuSeconds, dbNet: r.cpuSeconds.db - background * r.wallSeconds },
    dbBackgroundCpuPerSecond: background,
  };
}

interface RunPlace {
  placement: Placement;
  run: number;
  /** The job a ledger run names. */
  jobId?: string;
  cpus: string | undefined;
  onSpawn: (pid: number) => void;
}

async function runTightLoop(
  options: StreamBenchOptions,
  place: RunPlace & {
    phase: RunRecord['phase'];
    concurrency: number;
    seed: number;
    groupReads?: number;
  },
): Promise<RunRecord> {
  const config: TightLoopConfig = {
    db: options.db,
    dataset: options.dataset,
    concurrency: place.concurrency,
    seed: place.seed,
    warmupReads: options.samples,
    ...(place.groupReads === undefined ? {} : { groupReads: place.groupReads }),
  };
  const r = await measureLoaderRun(
    startBenchChild<TightLoopResult>('tightLoopChild', config, childOptions(place)),
    { db: options.dbPid },
    options.signal,
  );
  return {
    placement: place.placement,
    scenario: place.groupReads === undefined ? 'tight-loop' : 'tight-loop-grouped',
    phase: place.phase,
    run: place.run,
    concurrency: place.concurrency,
    ...(place.groupReads === undefined ? {} : { groupReads: place.groupReads }),
    seed: place.seed,
    ...figures(r.result, options),
    cpuSeconds: { ...defined('db', r.cpu.db), client: r.result.cpuSeconds },
  };
}

async function runService(
  options: StreamBenchOptions,
  serve: ServeProcess,
  scenario: ServiceScenario,
  place: RunPlace,
  mix: MixSplits | undefined,
): Promise<RunRecord> {
  const sources = scenario.mixed ? mix?.sources : undefined;
  const config: SdkClientConfig = {
    address: serve.address,
    dataset: options.dataset,
    batchSize: options.batchSize,
    seed: place.run,
    ordering: scenario.ordering,
    ...(scenario.prefetch === undefined ? {} : { prefetch: scenario.prefetch }),
    ...(scenario.columns ? { columns: Object.keys(BENCH_COLUMNS) } : {}),
    ...(scenario.ledger ? { jobId: ledgerJobId(place) } : {}),
    warmupWorldSize: 1,
    // Repeated: a part's quota may exceed its size by a sample or two, as the split rounds.
    ...(sources
      ? {
          sources: sources.map((s) => ({
            dataset: options.dataset,
            split: s.split,
            weight: s.weight,
            repeat: true,
          })),
          samplesPerEpoch: options.samples,
        }
      : {}),
  };
  const r = await measureLoaderRun(
    startBenchChild<SdkClientResult>('sdkClientChild', config, childOptions(place)),
    { db: options.dbPid, loader: serve.pid },
    options.signal,
  );
  return {
    placement: place.placement,
    scenario: scenario.scenario,
    phase: 'timed',
    run: place.run,
    ordering: scenario.ordering,
    ...(scenario.prefetch === undefined ? {} : { prefetch: scenario.prefetch }),
    ...(scenario.scenario === 'service-grouped' && options.groupReads !== undefined
      ? { groupReads: options.groupReads }
      : {}),
    seed: place.run,
    ...figures(r.result, options),
    cpuSeconds: {
      ...defined('db', r.cpu.db),
      ...defined('loader', r.cpu.loader),
      client: r.result.cpuSeconds,
    },
    waitMs: r.result.waitMs,
    ...(sources ? { sourceSamples: checkedSourceSamples(r.result, sources.length) } : {}),
    ...(scenario.columns ? { columnValues: checkedColumnValues(r.result) } : {}),
    ...(scenario.ledger
      ? { jobId: ledgerJobId(place), warmupSamples: r.result.warmupSamples }
      : {}),
  };
}

function ledgerJobId(place: RunPlace): string {
  if (place.jobId === undefined) throw new Error('a ledger run without a job id');
  return place.jobId;
}

/** The column values a columns run read: two per sample, or the run did not get them. */
function checkedColumnValues(r: SdkClientResult): number {
  const want = r.samples * Object.keys(BENCH_COLUMNS).length;
  if (r.columnValues !== want) {
    throw new Error(`a columns run read ${r.columnValues} column values, expected ${want}`);
  }
  return want;
}

/** The samples of each source a mixed run counted, which must add up to all it received. */
function checkedSourceSamples(r: SdkClientResult, sources: number): number[] {
  const counts = r.sourceSamples ?? [];
  const total = counts.reduce((sum, n) => sum + n, 0);
  if (counts.length !== sources || total !== r.samples) {
    throw new Error(
      `a mixed run received ${r.samples} samples but credited ${total} to ${counts.length} ` +
        `of its ${sources} sources`,
    );
  }
  return counts;
}

function childOptions(place: RunPlace): { cpus?: string; onSpawn: (pid: number) => void } {
  return { ...(place.cpus === undefined ? {} : { cpus: place.cpus }), onSpawn: place.onSpawn };
}

function figures(
  r: { samples: number; bytes: number; wallSeconds: number },
  options: StreamBenchOptions,
): Pick<
  RunRecord,
  'samples' | 'bytes' | 'wallSeconds' | 'samplesPerSecond' | 'megabytesPerSecond'
> {
  if (r.samples !== options.samples) {
    throw new Error(`a run delivered ${r.samples} samples, expected ${options.samples}`);
  }
  return {
    samples: r.samples,
    bytes: r.bytes,
    wallSeconds: r.wallSeconds,
    samplesPerSecond: r.samples / r.wallSeconds,
    megabytesPerSecond: r.bytes / 1e6 / r.wallSeconds,
  };
}

function defined<K extends string>(key: K, value: number | undefined): Partial<Record<K, number>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, number>);
}

/** How a run is named in progress lines and the table. @internal */
export function scenarioLabel(r: {
  scenario: ScenarioName;
  concurrency?: number;
  groupReads?: number;
}): string {
  switch (r.scenario) {
    case 'tight-loop':
      return `tight loop (C=${r.concurrency})`;
    case 'tight-loop-grouped':
      return `tight loop grouped (C=${r.concurrency}, ${r.groupReads ?? '?'} per query)`;
    case 'service-grouped':
      return `service grouped (out-of-order, ${r.groupReads ?? '?'} per query)`;
    case 'service':
      return 'service (out-of-order, default prefetch)';
    case 'service-in-order-p2':
      return 'service (in-order, prefetch 2)';
    case 'service-columns':
      return 'service with 2 metadata columns (out-of-order)';
    case 'service-ledger':
      return 'service naming a job: training ledger (out-of-order)';
    case 'service-mixed':
      return 'service mixed (out-of-order, default prefetch)';
  }
}

/** Everything `bench stream` measured, as written to its JSON file. */
export type StreamBenchReport = Awaited<ReturnType<typeof runStreamBench>>;
