import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { prepareMnist } from '../../datasets/prepareMnist.js';
import { defaultStateDir } from '../../devdb/defaultStateDir.js';
import { localClusterStatus } from '../../devdb/localClusterStatus.js';
import { startLocalCluster } from '../../devdb/localCluster.js';
import { stopLocalCluster } from '../../devdb/stopLocalCluster.js';
import { ingestDataset } from '../../server/ingest/ingestDataset.js';
import type { IngestSource } from '../../server/ingest/IngestSource.js';
import { readImageFolder } from '../../server/ingest/readImageFolder.js';
import { readManifest } from '../../server/ingest/readManifest.js';
import { median } from '../stream/stats.js';
import { processCpuSeconds } from '../stream/procCpu.js';
import { benchImageIndex, writeBenchJpegs } from '../stream/writeBenchJpegs.js';

/** One timed ingest. */
export interface IngestBenchRun {
  source: string;
  concurrency: number;
  samples: number;
  bytes: number;
  seconds: number;
  /** CPU seconds of this (the ingesting) process and of the database over the run. */
  ingestCpuSeconds: number;
  databaseCpuSeconds: number | undefined;
}

/** Options of {@link runIngestBench}. */
export interface IngestBenchOptions {
  /** ~100 kB JPEGs to ingest as they are. */
  images: number;
  runs: number;
  concurrencies: number[];
  mnistLimit?: number;
  coldStarts: number;
  log: (line: string) => void;
}

/**
 * The ingest benchmark: stored-as-is ~100 kB JPEGs and MNIST PNGs, each ingested `runs` times
 * into a fresh keyspace per concurrency (dropped before and after), with the CPU time of this
 * process and of the local database, and optionally the cold start of the local node.
 */
export async function runIngestBench(
  client: cassandra.Client,
  options: IngestBenchOptions,
): Promise<{ runs: IngestBenchRun[]; coldStartSeconds: number[] }> {
  const state = path.dirname(defaultStateDir());
  const imageRoot = path.join(state, 'bench', 'stream-100k');
  options.log(`making ${options.images} ~100 kB JPEGs in ${imageRoot} (once)`);
  await writeBenchJpegs(imageRoot, options.images);
  const jpegs = await readImageFolder(imageRoot);
  jpegs.entries = jpegs.entries.filter(
    (e) => (benchImageIndex(e.filePath) ?? Infinity) < options.images,
  );
  const mnistDir = path.join(state, options.mnistLimit ? `mnist-${options.mnistLimit}` : 'mnist');
  const mnist = await prepareMnist({
    outDir: mnistDir,
    ...(options.mnistLimit ? { limit: options.mnistLimit } : {}),
  });
  const mnistSource = await readManifest(mnist.manifest);

  const dbPid = (await localClusterStatus(defaultStateDir())).nodes[0]?.pid ?? undefined;
  const runs: IngestBenchRun[] = [];
  const once = async (label: string, source: IngestSource, concurrency: number): Promise<void> => {
    const dataset = `bench_ingest_${label}`;
    await client.execute(`DROP KEYSPACE IF EXISTS ${dataset}`);
    const cpu0 = process.cpuUsage();
    const db0 = dbPid ? processCpuSeconds(dbPid) : undefined;
    const t0 = performance.now();
    const summary = await ingestDataset(client, {
      dataset,
      source,
      replication: { class: 'SimpleStrategy', replicationFactor: 1 },
      concurrency,
      strict: true,
    });
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const db1 = dbPid ? processCpuSeconds(dbPid) : undefined;
    const run: IngestBenchRun = {
      source: label,
      concurrency,
      samples: summary.written,
      bytes: summary.bytesWritten,
      seconds,
      ingestCpuSeconds: (cpu.user + cpu.system) / 1e6,
      databaseCpuSeconds: db0 !== undefined && db1 !== undefined ? db1 - db0 : undefined,
    };
    runs.push(run);
    options.log(
      `${label} c=${concurrency}: ${(run.samples / seconds).toFixed(0)} samples/s, ` +
        `${(run.bytes / 1e6 / seconds).toFixed(1)} MB/s, CPU s ingest ${run.ingestCpuSeconds.toFixed(1)} ` +
        `database ${run.databaseCpuSeconds?.toFixed(1) ?? '?'} over ${seconds.toFixed(1)} s`,
    );
    await client.execute(`DROP KEYSPACE IF EXISTS ${dataset}`);
  };
  for (let r = 0; r < options.runs; r++) {
    for (const c of options.concurrencies) {
      await once('jpeg100k', jpegs, c);
      await once('mnist', mnistSource, c);
    }
  }

  const coldStartSeconds: number[] = [];
  for (let i = 0; i < options.coldStarts; i++) {
    await stopLocalCluster(defaultStateDir());
    const t0 = performance.now();
    await startLocalCluster({ stateDir: defaultStateDir() });
    coldStartSeconds.push((performance.now() - t0) / 1000);
    options.log(`cold start ${i + 1}: ${coldStartSeconds.at(-1)!.toFixed(1)} s`);
  }
  return { runs, coldStartSeconds };
}

/** Markdown table of medians per source and concurrency. */
export function formatIngestBench(result: {
  runs: IngestBenchRun[];
  coldStartSeconds: number[];
}): string {
  const keys = [...new Set(result.runs.map((r) => `${r.source}|${r.concurrency}`))];
  const lines = [
    '| source | concurrency | samples | samples/s | MB/s | ingest CPU s | database CPU s | wall s |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const key of keys) {
    const rs = result.runs.filter((r) => `${r.source}|${r.concurrency}` === key);
    const m = (f: (r: IngestBenchRun) => number): number => median(rs.map(f));
    lines.push(
      `| ${rs[0]!.source} | ${rs[0]!.concurrency} | ${rs[0]!.samples} | ${m((r) => r.samples / r.seconds).toFixed(0)} | ` +
        `${m((r) => r.bytes / 1e6 / r.seconds).toFixed(1)} | ${m((r) => r.ingestCpuSeconds).toFixed(1)} | ` +
        `${m((r) => r.databaseCpuSeconds ?? NaN).toFixed(1)} | ${m((r) => r.seconds).toFixed(1)} |`,
    );
  }
  if (result.coldStartSeconds.length > 0) {
    lines.push(
      '',
      `local node cold start (jars cached), median of ${result.coldStartSeconds.length}: ` +
        `${median(result.coldStartSeconds).toFixed(1)} s`,
    );
  }
  return `${lines.join('\n')}\n`;
}
