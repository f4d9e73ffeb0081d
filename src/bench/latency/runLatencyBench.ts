import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { LoaderClient } from '../../client/LoaderClient.js';
import { serverConfigSchema } from '../../server/config/serverConfig.js';
import type { DbConfig } from '../../server/config/dbConfig.js';
import { createDbClient } from '../../server/db/createDbClient.js';
import { benchEnvironment } from '../stream/benchEnvironment.js';
import { prepareStreamDataset } from '../stream/prepareStreamDataset.js';
import { cpuMeter } from '../stream/procCpu.js';
import { startServeProcess, type ServeProcess } from '../stream/serveProcess.js';
import { startBenchChild } from '../stream/startBenchChild.js';
import type { LatencyBenchOptions } from './LatencyBenchOptions.js';
import type {
  LatencyBenchReport,
  LatencyRun,
  LatencyScenario,
  RouteSet,
} from './LatencyBenchReport.js';
import type { SdkClientConfig, SdkClientResult } from '../stream/sdkClientChild.js';
import { latencyChartSvg } from './latencyChartSvg.js';
import { peakRssBytes, resetPeakRss } from './peakRss.js';
import { congestedToxics, latencyToxics } from './routeToxics.js';
import { latencyRatios, summarizeLatencyRuns } from './summarizeLatencyRuns.js';
import { startToxiproxy } from './toxiproxy.js';

/** How the trainer asks for its stream in each scenario. */
const SCENARIOS: Record<
  LatencyScenario,
  { ordering: 'in-order' | 'out-of-order'; prefetch?: number }
> = {
  B: { ordering: 'in-order', prefetch: 2 },
  C: { ordering: 'out-of-order' },
};

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
export async function runLatencyBench(options: LatencyBenchOptions): Promise<LatencyBenchReport> {
  const log = options.log ?? (() => undefined);
  const signal = options.signal;
  const started = performance.now();
  const startedAt = new Date();
  const childPids: number[] = [];
  const onSpawn = (pid: number): void => void childPids.push(pid);
  const progress =
    options.progress ??
    (() => ({ update: () => undefined, log: (line: string) => log(line), stop: () => undefined }));

  const client = await createDbClient(options.db);
  let environment;
  let dataset;
  try {
    environment = await benchEnvironment(client);
    dataset = await prepareStreamDataset(client, {
      name: options.dataset,
      samples: options.samples,
      imageRoot: options.imageRoot,
      progress,
      ...(signal ? { signal } : {}),
    });
  } finally {
    await client.shutdown();
  }
  log(
    `dataset ${dataset.name}: ${dataset.samples} samples, mean ${(dataset.meanBytes / 1e3).toFixed(1)} kB`,
  );

  const upstream = `${options.db.contactPoints[0] ?? '127.0.0.1'}:${options.db.port}`;
  const toxiproxy = await startToxiproxy(options.toxiproxy, { onSpawn });
  const serves: ServeProcess[] = [];
  const runs: LatencyRun[] = [];
  let peakRssPerRun = true;
  let extraPath: string | undefined;
  const withCongested = options.congestedAtRttMs !== undefined;
  const perRound = options.rttsMs.length * 2 + (withCongested ? 2 : 0);
  const bar = progress('bench latency', perRound * options.runs, 'runs');
  try {
    const mainPort = await toxiproxy.createProxy('main', upstream);
    await toxiproxy.setToxics('main', latencyToxics(0));
    const viaMain: DbConfig = { ...options.db, contactPoints: ['127.0.0.1'], port: mainPort };
    serves.push(await startServeProcess({ db: viaMain, onSpawn }));
    if (withCongested) {
      const congestedPort = await toxiproxy.createProxy('congested', upstream);
      await toxiproxy.setToxics('congested', congestedToxics(options.congested));
      extraPath = `congested=127.0.0.1:${congestedPort}`;
      serves.push(
        await startServeProcess({
          db: viaMain,
          onSpawn,
          env: { SCYLLA_LOADER_EXTRA_PATHS: extraPath },
        }),
      );
    }
    for (const serve of serves) await warmUpLoader(serve, options);

    const measureOn = async (
      serve: ServeProcess,
      routes: RouteSet,
      rttMs: number,
      run: number,
    ): Promise<void> => {
      const order: LatencyScenario[] = run % 2 === 0 ? ['B', 'C'] : ['C', 'B'];
      for (const scenario of order) {
        signal?.throwIfAborted();
        const r = await runClient(options, serve, { scenario, routes, rttMs, run, onSpawn });
        if (r.loaderPeakRssBytes === undefined) peakRssPerRun = false;
        runs.push(r);
        bar.update(runs.length);
        bar.log(
          `run ${run + 1} ${scenario} ${routes} RTT ${rttMs} ms: ${Math.round(r.samplesPerSecond)} samples/s, ` +
            `${r.megabytesPerSecond.toFixed(1)} MB/s, batch wait p50 ${r.waitMs.p50.toFixed(1)} / ` +
            `p99 ${r.waitMs.p99.toFixed(1)} ms`,
        );
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
    bar.stop();
    await Promise.allSettled(serves.map((s) => s.stop()));
    await toxiproxy.stop();
  }

  const serverDefaults = serverConfigSchema.parse({ db: {} });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const summary = summarizeLatencyRuns(runs);
  const report: LatencyBenchReport = {
    startedAt: startedAt.toISOString(),
    seconds: (performance.now() - started) / 1000,
    environment: { ...environment, toxiproxy: toxiproxyVersion(options.toxiproxy) },
    settings: {
      samples: options.samples,
      runs: options.runs,
      batchSize: options.batchSize,
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
    childPids,
    toxiproxyPid: toxiproxy.pid,
    jsonPath: path.join(options.outDir, `latency-${stamp}.json`),
    svgPath: path.join(options.outDir, `latency-${stamp}.svg`),
  };
  await mkdir(options.outDir, { recursive: true });
  await writeFile(report.jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(
    report.svgPath,
    latencyChartSvg(
      summary,
      `samples/s vs injected round trip (${dataset.samples} x ${(dataset.meanBytes / 1e3).toFixed(0)} kB, median of ${options.runs})`,
    ),
  );
  return report;
}

/** One untimed epoch through a fresh loader, so the measured runs find it warmed up. */
async function warmUpLoader(serve: ServeProcess, options: LatencyBenchOptions): Promise<void> {
  const client = new LoaderClient(serve.address);
  try {
    for await (const batch of client.streamBatches(
      { dataset: options.dataset, split: 'all', batchSize: options.batchSize, seed: 999_999 },
      options.signal ? { signal: options.signal } : {},
    )) {
      void batch;
    }
  } finally {
    client.close();
  }
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
    scenario: LatencyScenario;
    routes: RouteSet;
    rttMs: number;
    run: number;
    onSpawn: (pid: number) => void;
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
  };
  const child = startBenchChild<SdkClientResult>(CLIENT_SCRIPT, config, {
    onSpawn: place.onSpawn,
  });
  const onAbort = (): void => void child.stop();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let result: SdkClientResult;
  let cpu: Record<string, number | undefined>;
  let rss: number | undefined;
  try {
    await child.ready;
    options.signal?.throwIfAborted();
    const rssReset = resetPeakRss(serve.pid);
    const meter = cpuMeter({ loader: serve.pid, db: options.dbPid });
    child.go();
    result = await child.result;
    cpu = meter();
    rss = rssReset ? peakRssBytes(serve.pid) : undefined;
  } catch (err) {
    options.signal?.throwIfAborted();
    throw err;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await child.stop();
  }
  if (result.samples !== options.samples) {
    throw new Error(`a run delivered ${result.samples} samples, expected ${options.samples}`);
  }
  const loader = cpu['loader'];
  const db = cpu['db'];
  return {
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
    warmupBatches: result.warmupBatches,
    cpuSeconds: {
      ...(loader === undefined ? {} : { loader }),
      ...(db === undefined ? {} : { db }),
      client: result.cpuSeconds,
    },
    ...(loader === undefined ? {} : { loaderCpuSecondsPerGB: loader / (result.bytes / 1e9) }),
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
