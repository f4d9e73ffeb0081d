import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import pMap from 'p-map';
import type { Progress } from '../../src/cli/index.js';
import { prepareMnist } from '../../src/datasets/index.js';
import { readPhotoFolder, writePhotoJpegs } from '../../src/datasets/photos/index.js';
import { createDbClient, type ListedSource, readManifest } from '../../src/core/index.js';
import { startServeProcess, type ServeProcess } from '../stream/serveProcess.js';
import { prepareIngestFormats, type PayloadRow } from './prepareIngestFormats.js';
import type { IngestPayload } from './runIngestWay.js';
import { benchEnvironment, type BenchEnvironment } from '../../test/support/index.js';
import { median } from '../stream/stats.js';
import type { IngestBenchOptions } from './resolveIngestBenchOptions.js';
import type {
  IngestBenchSource,
  IngestRunRecord,
  IngestSourceInfo,
  ColdStartRecord,
} from './IngestBenchReport.js';
import { localDatabasePids } from './localDatabasePids.js';
import { measureColdStarts } from './measureColdStarts.js';
import { measureIngestRun } from './measureIngestRun.js';
import { summarizeIngestRuns } from './summarizeIngestRuns.js';
import { reportPath, writeReportJson } from '../../test/support/index.js';
import { startBenchRun } from '../report/benchRun.js';

/** Other processes busier than this during a run make the figures suspect. */
const DISTURBED_CORES = 0.25;

/**
 * The ingest benchmark of the issue: distinct ~100 kB JPEGs stored as they are, and MNIST,
 * each ingested `runs` times at every concurrency into a fresh keyspace (rounds interleave the
 * sources and concurrencies, so a noisy minute on the shared machine spreads over all of them
 * instead of spoiling one), with samples/s, MB/s and the CPU seconds of this process, of the
 * database and of the rest of the machine. Then, if asked, the local node's cold start. Every
 * keyspace used is dropped at the end, failure or not, and the local node is left running.
 * Writes the whole report as JSON to `outDir/ingest-<timestamp>.json`.
 */
export async function runIngestBench(options: IngestBenchOptions) {
  const { log, signal, startedAt, seconds } = startBenchRun(options);
  const notes: string[] = [];

  const sources: Array<{ info: IngestSourceInfo; payload: IngestPayload }> = [];
  const jpegs = await prepareJpegs(options);
  sources.push({
    info: await describeSource('jpeg100k', jpegs, `${options.keyspacePrefix}${options.images}`),
    payload: await preparePayload(options, `jpeg100k-${options.images}`, jpegs),
  });
  if (options.mnist) {
    const mnist = await prepareMnistSource(options);
    const name = `mnist-${options.mnistLimit ?? 'all'}`;
    sources.push({
      info: await describeSource('mnist', mnist, `${options.keyspacePrefix}mnist`),
      payload: await preparePayload(options, name, mnist),
    });
  }
  for (const { info } of sources) {
    log(
      `${info.source}: ${info.samples} files, ${(info.bytes / 1e6).toFixed(1)} MB, mean ` +
        `${info.meanBytes.toFixed(0)} B (${info.minBytes} to ${info.maxBytes} B)`,
    );
  }

  const runs: IngestRunRecord[] = [];
  const keyspaces = sources.map((s) => s.info.keyspace);
  let client: cassandra.Client | undefined;
  let loader: ServeProcess | undefined;
  let environment: BenchEnvironment & { databaseNodes: number; databaseIsLocalNode: boolean };
  try {
    client = await createDbClient(options.db);
    const pids = await localDatabasePids(options.localStateDir);
    environment = {
      ...(await benchEnvironment(client)),
      databaseNodes: pids.length,
      databaseIsLocalNode: pids.length > 0,
    };
    if (pids.length === 0) {
      notes.push('the database is not the local node: its CPU seconds were not measured');
    }
    if (options.ways.includes('rpc')) {
      loader = await startServeProcess({ db: options.db });
      log(`loader for the rpc way: ${loader.address} (pid ${loader.pid})`);
    }
    for (let run = 1; run <= options.runs; run++) {
      for (const concurrency of options.concurrencies) {
        for (const { info, payload } of sources) {
          for (const way of options.ways) {
            signal?.throwIfAborted();
            const record = await measureIngestRun(client, {
              source: info.source,
              way,
              payload,
              keyspace: info.keyspace,
              concurrency,
              run,
              db: options.db,
              ...(loader ? { loader: { address: loader.address, pid: loader.pid } } : {}),
              dbPids: await localDatabasePids(options.localStateDir),
              settleMaxMs: options.settleMaxMs,
              ...(options.progress ? { progress: options.progress } : {}),
              ...(signal ? { signal } : {}),
            });
            runs.push(record);
            log(describeRun(record, options.runs));
          }
        }
      }
    }
  } finally {
    await loader?.stop();
    if (client) {
      // Best effort: an interrupted run must not leave hundreds of MB behind.
      for (const ks of keyspaces) {
        await client.execute(`DROP KEYSPACE IF EXISTS ${ks}`).catch(() => undefined);
      }
      await client.shutdown();
    }
  }

  let coldStart = null as {
    runs: ColdStartRecord[];
    medianStartSeconds: number;
    medianStopSeconds: number;
  } | null;
  if (options.coldStarts > 0 && options.localStateDir !== undefined) {
    log(
      `stopping and starting the local node ${options.coldStarts} time(s): anything else ` +
        'using it (a test run) loses its database meanwhile',
    );
    const coldRuns = await measureColdStarts(options.localStateDir, options.coldStarts, {
      log,
      ...(signal ? { signal } : {}),
    });
    coldStart = {
      runs: coldRuns,
      medianStartSeconds: median(coldRuns.map((r) => r.startSeconds)),
      medianStopSeconds: median(coldRuns.map((r) => r.stopSeconds)),
    };
  }

  const disturbed = runs.filter((r) => (r.cores.rest ?? 0) > DISTURBED_CORES);
  if (disturbed.length > 0) {
    const worst = Math.max(...disturbed.map((r) => r.cores.rest ?? 0));
    notes.push(
      `other processes used more than ${DISTURBED_CORES} cores in ${disturbed.length} of ` +
        `${runs.length} runs (up to ${worst.toFixed(2)}): those figures are disturbed; ` +
        'rerun when the machine is quieter',
    );
  }
  const unsettled = runs.filter((r) => r.settleSeconds * 1000 >= options.settleMaxMs);
  if (unsettled.length > 0) {
    notes.push(
      `the database was still busy after ${options.settleMaxMs / 1000} s before ` +
        `${unsettled.length} run(s) (compaction, or another client)`,
    );
  }

  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    seconds: seconds(),
    settings: {
      images: options.images,
      runs: options.runs,
      concurrencies: options.concurrencies,
      ways: options.ways,
      mnist: options.mnist,
      mnistLimit: options.mnistLimit ?? null,
      coldStarts: options.coldStarts,
    },
    environment,
    sources: sources.map((s) => s.info),
    runs,
    summary: summarizeIngestRuns(runs),
    coldStart,
    keyspaces,
    notes,
    jsonPath: reportPath(options.outDir, 'ingest', startedAt),
  };
  await writeReportJson(report.jsonPath, report);
  return report;
}

/** Images 0..N-1 of the shared imagenet-size photo tree (written once), as an ingest source. */
async function prepareJpegs(options: IngestBenchOptions): Promise<ListedSource> {
  const progress = options.progress?.(
    `prepare photo JPEGs (imagenet) in ${options.imageRoot}`,
    options.images,
    'images',
  );
  try {
    const made = await writePhotoJpegs({
      root: options.imageRoot,
      count: options.images,
      preset: 'imagenet',
      onProgress: (done, bytes) => progress?.update(done, bytes),
      ...(options.log ? { log: options.log } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (made.written === 0) {
      options.log?.(`${options.images} JPEGs already in ${options.imageRoot}`);
    }
  } finally {
    progress?.stop();
  }
  return readPhotoFolder(options.imageRoot, options.images);
}

async function prepareMnistSource(options: IngestBenchOptions): Promise<ListedSource> {
  let progress: Progress | undefined;
  try {
    const prepared = await prepareMnist({
      outDir: options.mnistDir,
      ...(options.mnistLimit ? { limit: options.mnistLimit } : {}),
      onProgress: (done, total) => {
        progress ??= options.progress?.('prepare MNIST', total, 'images');
        progress?.update(done);
      },
    });
    return await readManifest(prepared.manifest);
  } finally {
    progress?.stop();
  }
}

async function describeSource(
  source: IngestBenchSource,
  ingest: ListedSource,
  keyspace: string,
): Promise<IngestSourceInfo> {
  // 512 at a time: stat-ing 70,000 files at once would open as many requests at once.
  const sizes = await pMap(ingest.entries, async (e) => (await stat(e.filePath!)).size, {
    concurrency: 512,
  });
  const bytes = sizes.reduce((a, b) => a + b, 0);
  // Not Math.min(...sizes): 70,000 arguments come close to V8's limit on a call's arguments.
  const minBytes = sizes.reduce((a, b) => Math.min(a, b), Infinity);
  const maxBytes = sizes.reduce((a, b) => Math.max(a, b), 0);
  return {
    source,
    description: ingest.description,
    keyspace,
    samples: sizes.length,
    bytes,
    meanBytes: sizes.length > 0 ? bytes / sizes.length : 0,
    minBytes: sizes.length > 0 ? minBytes : 0,
    maxBytes,
  };
}

/**
 * A source in every form the ways read: its bytes in memory (the write loop, the rpc way), as
 * WebDataset shards and Parquet (written once under the bench folder), and as a manifest
 * naming exactly its files (for `ingest --workers`).
 */
async function preparePayload(
  options: IngestBenchOptions,
  name: string,
  listed: ListedSource,
): Promise<IngestPayload> {
  const rows: PayloadRow[] = await pMap(
    listed.entries,
    async (e) => ({
      sourceKey: e.sourceKey,
      data: await readFile(e.filePath!),
      label: e.label ?? 0,
      ext: path.extname(e.filePath!).slice(1).toLowerCase() || 'bin',
    }),
    { concurrency: 64 },
  );
  const dir = path.join(options.formatsRoot, name);
  const needsFormats = options.ways.some((w) => w === 'webdataset' || w === 'parquet');
  const formats = needsFormats ? await prepareIngestFormats(dir, rows) : undefined;
  const manifest = path.join(options.formatsRoot, `${name}.csv`);
  const named = listed.labelNames;
  const lines = listed.entries.map(
    (e) => `${e.filePath},${named.length > 0 ? named[e.label ?? 0] : e.label}`,
  );
  await writeFile(manifest, `path,label\n${lines.join('\n')}\n`);
  return { listed, rows, formats, cliSource: ['--manifest', manifest] };
}

function describeRun(r: IngestRunRecord, runs: number): string {
  const db = r.cpuSeconds.database === null ? '?' : r.cpuSeconds.database.toFixed(1);
  const rest = r.cpuSeconds.rest === null ? '?' : r.cpuSeconds.rest.toFixed(1);
  return (
    `${r.source} ${r.way} c=${r.concurrency} run ${r.run}/${runs}: ${r.samplesPerSecond.toFixed(0)} ` +
    `samples/s, ${r.megabytesPerSecond.toFixed(1)} MB/s, ${r.wallSeconds.toFixed(2)} s; CPU s ` +
    `loader ${r.cpuSeconds.loader.toFixed(1)}, database ${db}, rest ${rest}`
  );
}

/** Everything `bench ingest` measured, as written to its JSON file. */
export type IngestBenchReport = Awaited<ReturnType<typeof runIngestBench>>;
