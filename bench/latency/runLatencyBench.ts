import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { serverConfigSchema } from '../../src/server/index.js';
import type { DbConfig } from '../../src/core/index.js';
import { preparePhotoBench } from '../dataset/benchDataset.js';
import { startServeProcess, warmUpLoader, type ServeProcess } from '../stream/serveProcess.js';
import { startBenchChild } from '../stream/startBenchChild.js';
import type { LatencyBenchOptions } from './LatencyBenchOptions.js';
import type { LatencyPace, LatencyRun, LatencyScenario, RouteSet } from './LatencyBenchReport.js';
import { pinProcess, resolvePlacements } from '../stream/pinning.js';
import type { SdkClientConfig, SdkClientResult } from '../stream/sdkClientChild.js';
import { type Placement } from '../stream/StreamBenchOptions.js';
import { latencyChartSvg } from './latencyChartSvg.js';
import { congestedToxics, latencyToxics } from './routeToxics.js';
import { fullSpeedRun, latencyRatios, summarizeLatencyRuns } from './summarizeLatencyRuns.js';
import { startToxiproxy } from '../../test/support/index.js';
import { measureLoaderRun } from '../measure/measureLoaderRun.js';
import { reportPath, writeReportJson } from '../../test/support/index.js';
import { startBenchRun } from '../report/benchRun.js';

/** How the trainer asks for its stream in each scenario. */
const SCENARIOS: Record<
  LatencyScenario,
  { ordering: 'in-order' | 'out-of-order'; prefetch?: number }
> = {
  B: { ordering: 'in-order', prefetch: 2 },
  C: { ordering: 'out-of-order' },
};

/** The loader's gauge of database reads in flight (all its streams), sampled during each run. */
const READS_IN_FLIGHT = 'scylla_loader_db_requests_in_flight';

/** The client child is `bench stream`'s, with waits of the first batches left out. */
const CLIENT_SCRIPT = 'sdkClientChild';

/**
 * The latency benchmark of issue 5: the ~100 kB JPEG dataset of `bench stream`, streamed
 * through real `serve` processes and the SDK in a child process, with every database
 * connection of the loader going through toxiproxy. The main route gets each injected round
 * trip in turn (its toxics change under the open connections); a second loader also has the
 * congested route as an extra path. Scenarios B (IN_ORDER, prefetch 2) and C (OUT_OF_ORDER,
 * server defaults) run interleaved, `runs` rounds, B and C alternating who goes first.
 * Toxiproxy and every child are ended whatever happens. Writes the JSON report and an SVG
 * chart to `outDir`.
 */
export async function runLatencyBench(options: LatencyBenchOptions) {
  const { log, signal, progress, startedAt, childPids, onSpawn, seconds } = startBenchRun(options);

  const { environment, dataset } = await preparePhotoBench({
    ...options,
    progress,
    log,
  });

  const { placements, pinning, notes } = await resolvePlacements(
    options.placements,
    options.dbPid,
    log,
  );
  const pace = options.trainerPace;
  const paces: LatencyPace[] = pace === undefined ? ['max'] : ['max', 'trainer'];
  const upstream = `${options.db.contactPoints[0] ?? '127.0.0.1'}:${options.db.port}`;
  const toxiproxy = await startToxiproxy(options.toxiproxy, { onSpawn });
  const runs: LatencyRun[] = [];
  let peakRssPerRun = true;
  let extraPath: string | undefined;
  const withCongested = options.congestedAtRttMs !== undefined;
  const perRound = (options.rttsMs.length + (withCongested ? 1 : 0)) * 2 * paces.length;
  const bar = progress('bench latency', perRound * options.runs * placements.length, 'runs');
  try {
    const mainPort = await toxiproxy.createProxy('main', upstream);
    await toxiproxy.setToxics('main', latencyToxics(0));
    const viaMain: DbConfig = { ...options.db, contactPoints: ['127.0.0.1'], port: mainPort };
    if (withCongested) {
      const congestedPort = await toxiproxy.createProxy('congested', upstream);
      await toxiproxy.setToxics('congested', congestedToxics(options.congested));
      extraPath = `congested=127.0.0.1:${congestedPort}`;
    }
    for (const placement of placements) {
      const restore: (() => Promise<void>)[] = [];
      const serves: ServeProcess[] = [];
      try {
        let cpus: string | undefined;
        if (placement === 'pinned' && pinning && options.dbPid !== undefined) {
          // Toxiproxy stands for the network: it runs on the database's core.
          restore.push(await pinProcess(options.dbPid, pinning.database));
          restore.push(await pinProcess(toxiproxy.pid, pinning.database));
          cpus = pinning.loaderAndClient;
        }
        const placed = { onSpawn, ...(cpus === undefined ? {} : { cpus }) };
        serves.push(await startServeProcess({ db: viaMain, ...placed }));
        if (extraPath !== undefined) {
          serves.push(
            await startServeProcess({
              db: viaMain,
              ...placed,
              env: { SCYLLA_LOADER_EXTRA_PATHS: extraPath },
            }),
          );
        }
        for (const serve of serves) await warmUpLoader(serve, options);

        /** The paced trainer's samples/s in a run: fixed, or a share of this round's C(0). */
        const trainerRate = (routes: RouteSet, run: number): number => {
          if (pace === undefined) throw new Error('no paced trainer');
          if ('samplesPerSecond' in pace) return pace.samplesPerSecond;
          if (routes === 'main+congested') return pace.congestedSamplesPerSecond;
          const c0 = fullSpeedRun(
            runs.filter((r) => r.placement === placement),
            { run, scenario: 'C', routes: 'main', rttMs: 0 },
          );
          if (c0 === undefined) throw new Error(`round ${run + 1} has no C at 0 ms to pace by`);
          return pace.share * c0.samplesPerSecond;
        };
        const measureOn = async (
          serve: ServeProcess,
          routes: RouteSet,
          rttMs: number,
          run: number,
        ): Promise<void> => {
          const order: LatencyScenario[] = run % 2 === 0 ? ['B', 'C'] : ['C', 'B'];
          for (const how of paces) {
            // Every full-speed run of the round at this round trip comes first: C's at 0 ms
            // sets the paced trainer's rate.
            const stepMs =
              how === 'trainer' ? (1000 * options.batchSize) / trainerRate(routes, run) : undefined;
            for (const scenario of order) {
              signal?.throwIfAborted();
              const r = await runClient(options, serve, {
                placement,
                pace: how,
                ...(stepMs !== undefined ? { stepMs } : {}),
                scenario,
                routes,
                rttMs,
                run,
                placed,
                proxyPid: toxiproxy.pid,
              });
              if (r.loaderPeakRssBytes === undefined) peakRssPerRun = false;
              runs.push(r);
              bar.update(runs.length);
              bar.log(
                `${placement} run ${run + 1} ${scenario} ${routes} RTT ${rttMs} ms` +
                  `${how === 'trainer' ? ` paced trainer (${Math.round((1000 * options.batchSize) / stepMs!)}/s)` : ''}: ` +
                  `${Math.round(r.samplesPerSecond)} samples/s, ${r.megabytesPerSecond.toFixed(1)} MB/s, ` +
                  `batch wait p50 ${r.waitMs.p50.toFixed(1)} / p99 ${r.waitMs.p99.toFixed(1)} ms; CPU s ` +
                  `loader ${r.cpuSeconds.loader?.toFixed(1) ?? '-'}, proxy ${r.cpuSeconds.proxy?.toFixed(1) ?? '-'}, ` +
                  `database ${r.cpuSeconds.db?.toFixed(1) ?? '-'}, trainer ${r.cpuSeconds.client.toFixed(1)}; ` +
                  `reads in flight mean ${r.readsInFlight?.mean.toFixed(0) ?? '-'} / max ${r.readsInFlight?.max ?? '-'}`,
              );
            }
          }
        };
        for (let run = 0; run < options.runs; run++) {
          for (const rttMs of options.rttsMs) {
            await toxiproxy.setToxics('main', latencyToxics(rttMs));
            await measureOn(serves[0]!, 'main', rttMs, run);
          }
          if (options.congestedAtRttMs !== undefined) {
            await toxiproxy.setToxics('main', latencyToxics(options.congestedAtRttMs));
            await measureOn(serves[1]!, 'main+congested', options.congestedAtRttMs, run);
          }
        }
      } finally {
        await Promise.allSettled(serves.map((s) => s.stop()));
        // Every undo is tried (the database's affinity too when toxiproxy's is gone); a failed
        // one is reported, never hides the error that ended the runs.
        for (const undo of restore.reverse()) {
          await undo().catch((err: unknown) =>
            log(`could not restore a CPU affinity: ${(err as Error)?.message ?? String(err)}`),
          );
        }
      }
    }
  } finally {
    bar.stop();
    await toxiproxy.stop();
  }

  const serverDefaults = serverConfigSchema.parse({ db: {} });
  const summary = summarizeLatencyRuns(runs);
  const report = {
    startedAt: startedAt.toISOString(),
    seconds: seconds(),
    environment: { ...environment, toxiproxy: toxiproxyVersion(options.toxiproxy) },
    settings: {
      samples: options.samples,
      runs: options.runs,
      batchSize: options.batchSize,
      placements,
      ...(pinning && placements.includes('pinned') ? { pinning } : {}),
      ...(pace === undefined ? {} : { trainer: pace }),
      rttsMs: options.rttsMs,
      congestedAtRttMs: options.congestedAtRttMs,
      congested: options.congested,
      jitter: 'latency toxic jitter of +-10% of each direction, at most 5 ms',
      warmupFraction: options.warmupFraction,
      connectionsPerHost: options.db.connectionsPerHost,
      serverDefaultPrefetch: serverDefaults.defaultPrefetch,
      serverMaxInFlightPerStream: serverDefaults.maxInFlightPerStream,
      peakRssPerRun,
      ...(extraPath === undefined ? {} : { extraPath }),
    },
    dataset,
    runs,
    summary,
    ratios: latencyRatios(runs),
    notes,
    childPids,
    toxiproxyPid: toxiproxy.pid,
    jsonPath: reportPath(options.outDir, 'latency', startedAt),
    svgPath: reportPath(options.outDir, 'latency', startedAt).replace(/\.json$/, '.svg'),
  };
  await writeReportJson(report.jsonPath, report);
  await writeFile(
    report.svgPath,
    latencyChartSvg(
      summary,
      `samples/s vs injected round trip (${dataset.samples} x ${(dataset.meanBytes / 1e3).toFixed(0)} kB, median of ${options.runs})`,
    ),
  );
  return report;
}

/**
 * Runs one trainer child against `serve`: waits until it is set up, resets the loader's peak
 * RSS, samples CPU times, lets it go, and samples again when it reports; the child is ended
 * whatever happens.
 */
async function runClient(
  options: LatencyBenchOptions,
  serve: ServeProcess,
  place: {
    placement: Placement;
    pace: LatencyPace;
    stepMs?: number;
    scenario: LatencyScenario;
    routes: RouteSet;
    rttMs: number;
    run: number;
    placed: { onSpawn: (pid: number) => void; cpus?: string };
    /** Toxiproxy's process, whose CPU is metered with the loader's. */
    proxyPid: number;
  },
): Promise<LatencyRun> {
  const how = SCENARIOS[place.scenario];
  const config: SdkClientConfig = {
    address: serve.address,
    dataset: options.dataset,
    batchSize: options.batchSize,
    seed: place.run,
    ordering: how.ordering,
    ...(how.prefetch === undefined ? {} : { prefetch: how.prefetch }),
    warmupWorldSize: 10,
    warmupFraction: options.warmupFraction,
    ...(place.stepMs === undefined ? {} : { stepMs: place.stepMs }),
  };
  const child = startBenchChild<SdkClientResult>(CLIENT_SCRIPT, config, place.placed);
  const {
    result,
    cpu: { loader, db, proxy },
    loaderPeakRssBytes: rss,
    gauges,
  } = await measureLoaderRun(
    child,
    { loader: serve.pid, db: options.dbPid, proxy: place.proxyPid },
    options.signal,
    { metricsAddress: serve.metricsAddress, names: [READS_IN_FLIGHT] },
  );
  const inFlight = gauges?.[READS_IN_FLIGHT];
  if (result.samples !== options.samples) {
    throw new Error(`a run delivered ${result.samples} samples, expected ${options.samples}`);
  }
  return {
    placement: place.placement,
    pace: place.pace,
    ...(place.stepMs === undefined ? {} : { stepMs: place.stepMs }),
    scenario: place.scenario,
    ordering: how.ordering,
    ...(how.prefetch === undefined ? {} : { prefetch: how.prefetch }),
    routes: place.routes,
    rttMs: place.rttMs,
    run: place.run,
    seed: place.run,
    samples: result.samples,
    bytes: result.bytes,
    wallSeconds: result.wallSeconds,
    samplesPerSecond: result.samples / result.wallSeconds,
    megabytesPerSecond: result.bytes / 1e6 / result.wallSeconds,
    waitMs: result.waitMs,
    firstBatchMs: result.firstBatchMs,
    ...(result.ramp ? { ramp: result.ramp } : {}),
    warmupBatches: result.warmupBatches,
    stallFraction: result.steadyWallMs > 0 ? result.steadyWaitTotalMs / result.steadyWallMs : 0,
    ...(result.stallHalves ? { stallHalves: result.stallHalves } : {}),
    cpuSeconds: {
      ...(loader === undefined ? {} : { loader }),
      ...(db === undefined ? {} : { db }),
      ...(proxy === undefined ? {} : { proxy }),
      client: result.cpuSeconds,
    },
    ...(loader === undefined ? {} : { loaderCpuSecondsPerGB: loader / (result.bytes / 1e9) }),
    ...(loader === undefined || proxy === undefined || loader + proxy <= 0
      ? {}
      : { samplesPerLoaderAndProxyCpuSecond: result.samples / (loader + proxy) }),
    ...(inFlight === undefined
      ? {}
      : { readsInFlight: { mean: inFlight.mean, max: inFlight.max } }),
    ...(rss === undefined ? {} : { loaderPeakRssBytes: rss }),
  };
}

/** `toxiproxy-server -version`'s answer, or `unknown`. */
function toxiproxyVersion(binary: string): string {
  try {
    return execFileSync(binary, ['-version'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** Everything `bench latency` measured, as written to its JSON file. */
export type LatencyBenchReport = Awaited<ReturnType<typeof runLatencyBench>>;
