import path from 'node:path';
import type { DbConfig } from '../../src/core/index.js';
import { latencyToxics } from '../latency/routeToxics.js';
import { startToxiproxy } from '../../test/support/index.js';
import { measureLoaderRun } from '../measure/measureLoaderRun.js';
import { packageRoot } from '../../test/support/index.js';
import { preparePhotoBench } from '../dataset/benchDataset.js';
import { startServeProcess, warmUpLoader, type ServeProcess } from '../stream/serveProcess.js';
import { startBenchChild } from '../stream/startBenchChild.js';
import type { TransformBenchOptions } from './TransformBenchOptions.js';
import type { TransformLegChildResult, TransformLegRun } from './TransformBenchReport.js';
import { summarizeTransformRuns } from './summarizeTransformRuns.js';
import { legRuns, serverTransform, transformLegs, type TransformLegSpec } from './transformLegs.js';
import { startBenchRun } from '../report/benchRun.js';
import { prepareSegmentationBench, segmentationDatasetName } from './segmentationDataset.js';

/** The Python side of every leg. */
const LEG_SCRIPT = path.join(packageRoot, 'clients', 'python', 'bench', 'transform_legs.py');

/** Bytes of a sample id on the wire, added to the stored size for the Python legs. */
const ID_BYTES = 16;

/**
 * Issue 14's benchmark: the imagenet photo dataset of `bench stream` (ingested if missing),
 * one loader reading the database directly and one through toxiproxy, and every leg of
 * {@link transformLegs} run `runs` times, interleaved (the order rotates each run), each in a
 * fresh Python child (`clients/python/bench/transform_legs.py`) that reports its images, wall
 * and CPU seconds and response bytes, while this process meters the loader's and the
 * database's CPU around the child's measured part. Every child, the loaders and toxiproxy are
 * ended whatever happens. Writes the JSON report to `outDir`.
 */
export async function runTransformBench(options: TransformBenchOptions) {
  const { log, signal, progress, measureEach, writeReport } = startBenchRun(options);
  const legs = transformLegs(options.rttMs).filter((l) => options.legs.includes(l.name));

  const { environment, dataset } = await preparePhotoBench({
    ...options,
    progress,
    log,
  });

  // The masks leg's pairs: the same photos, each with a PNG mask as its label blob.
  const segmentation = legs.some((l) => l.masks)
    ? await prepareSegmentationBench({ ...options, progress })
    : undefined;
  if (segmentation) {
    log(
      `dataset ${segmentation.name}: ${segmentation.samples} image + mask pairs, mean ` +
        `${(segmentation.meanBytes / 1e3).toFixed(1)} kB`,
    );
  }

  let runs: TransformLegRun[];
  const notes: string[] = [
    'toxiproxy stands for the network: its CPU is in no leg (the 0 ms proxied leg pays its ' +
      'latency cost like the other one)',
  ];
  const upstream = `${options.db.contactPoints[0] ?? '127.0.0.1'}:${options.db.port}`;
  const toxiproxy = await startToxiproxy(options.toxiproxy);
  const serves: ServeProcess[] = [];
  try {
    const proxyPort = await toxiproxy.createProxy('main', upstream);
    await toxiproxy.setToxics('main', latencyToxics(0));
    const viaProxy: DbConfig = { ...options.db, contactPoints: ['127.0.0.1'], port: proxyPort };
    // Each loader is started (and warmed up) only when a chosen leg uses it.
    const start = async (db: DbConfig, env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> => {
      const serve = await startServeProcess({ db, env });
      serves.push(serve);
      await warmUpLoader(serve, { ...options, signal });
      return serve;
    };
    const direct = legs.some((l) => l.route === 'direct' && l.decoder === undefined)
      ? await start(options.db)
      : undefined;
    const sharpOnly = legs.some((l) => l.decoder === 'sharp')
      ? await start(options.db, { SCYLLA_LOADER_NATIVE_TRANSFORMS: 'off' })
      : undefined;
    const proxied = legs.some((l) => l.route === 'proxy') ? await start(viaProxy) : undefined;

    runs = await measureEach(
      'bench transform',
      'legs',
      legRuns(legs, options.runs),
      async ({ leg, run }) => {
        if (leg.route === 'proxy') await toxiproxy.setToxics('main', latencyToxics(leg.rttMs ?? 0));
        const serve =
          leg.route === 'proxy' ? proxied : leg.decoder === 'sharp' ? sharpOnly : direct;
        return runLeg(options, leg, run, serve!, { meanBytes: dataset.meanBytes });
      },
      (r, { leg, run }) => {
        const cpu = r.cpuSeconds;
        return (
          `run ${run + 1} ${leg.name}: ${(r.images / r.wallSeconds).toFixed(0)} images/s, CPU ` +
          `${((1000 * ((cpu.loader ?? 0) + cpu.python)) / r.images).toFixed(2)} ms/image ` +
          `(loader ${cpu.loader === undefined ? 'n/a' : ((1000 * cpu.loader) / r.images).toFixed(2)}, ` +
          `Python ${((1000 * cpu.python) / r.images).toFixed(2)}), ` +
          `${(r.wireBytesPerImage / 1e3).toFixed(1)} kB/image`
        );
      },
    );
  } finally {
    await Promise.allSettled(serves.map((s) => s.stop()));
    await toxiproxy.stop();
  }

  const { summary, goals } = summarizeTransformRuns(legs, runs);
  return writeReport('transform', options.outDir, {
    environment: { ...environment, python: options.python },
    settings: {
      samples: options.samples,
      batchSize: options.batchSize,
      epochs: options.epochs,
      runs: options.runs,
      workers: options.workers,
      rttMs: options.rttMs,
      size: options.size,
      flip: options.flip,
      jpegQuality: options.jpegQuality,
      legs,
      transform: serverTransform({ ...options, output: 'raw', quality: options.jpegQuality }),
    },
    dataset,
    ...(segmentation ? { segmentationDataset: segmentation } : {}),
    runs,
    summary,
    goals,
    notes,
  });
}

/**
 * One leg in a fresh Python child against `serve`, with the loader's and the database's CPU
 * metered around the child's measured part; a run that did not deliver every image of its
 * epochs is an error (a benchmark that lost samples measured something else).
 */
async function runLeg(
  options: TransformBenchOptions,
  leg: TransformLegSpec,
  run: number,
  serve: ServeProcess,
  dataset: { meanBytes: number },
): Promise<TransformLegRun> {
  const config = {
    leg: leg.kind,
    address: serve.address,
    dataset: leg.masks ? segmentationDatasetName(options.dataset) : options.dataset,
    batchSize: options.batchSize,
    epochs: options.epochs,
    seed: run,
    workers: leg.workers ?? options.workers,
    ...(leg.kind === 'server' || (leg.kind === 'dataset' && leg.output === 'raw')
      ? {
          transform: serverTransform({
            size: options.size,
            flip: options.flip,
            output: leg.output === 'jpeg' ? 'jpeg' : 'raw',
            quality: options.jpegQuality,
            masks: leg.masks === true,
          }),
        }
      : {}),
  };
  const expected = options.samples * options.epochs;
  const child = startBenchChild<TransformLegChildResult>(`transform_legs.py ${leg.name}`, config, {
    executable: options.python,
    args: [LEG_SCRIPT],
    // Generous: a slow Python leg on a busy machine must not be cut short (100 ms an image).
    timeoutMs: Math.max(600_000, expected * 100),
  });
  const { result, cpu } = await measureLoaderRun(
    child,
    { loader: serve.pid, db: options.dbPid },
    options.signal,
  );
  if (result.images !== expected) {
    throw new Error(
      `leg ${leg.name} run ${run + 1} delivered ${result.images} images, expected ${expected}` +
        (result.skippedUndecodable > 0 ? ` (${result.skippedUndecodable} undecodable)` : ''),
    );
  }
  const counted = result.wireBytes !== null;
  return {
    leg: leg.name,
    run,
    images: result.images,
    wallSeconds: result.wallSeconds,
    cpuSeconds: {
      ...(cpu.loader === undefined ? {} : { loader: cpu.loader }),
      python: result.cpuSeconds,
      ...(cpu.db === undefined ? {} : { database: cpu.db }),
    },
    wireBytesPerImage: counted ? result.wireBytes! / result.images : dataset.meanBytes + ID_BYTES,
    wireBytesCounted: counted,
    lastShape: result.lastShape,
  };
}

/** Everything `bench transform` measured, as written to its JSON file. */
export type TransformBenchReport = Awaited<ReturnType<typeof runTransformBench>>;
