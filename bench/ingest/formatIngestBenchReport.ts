import type { CpuSplit, IngestSourceInfo } from './IngestBenchReport.js';
import type { IngestBenchReport } from './runIngestBench.js';

/**
 * The report as Markdown: medians per source, way and concurrency with the goals, every run, the cold starts, and
 * the notes. CPU is given as seconds and as cores (CPU seconds per wall second) for the
 * ingesting process, the database and the rest of the machine, so a reader sees which one
 * was the limit on how many cores.
 */
export function formatIngestBenchReport(report: IngestBenchReport): string {
  const env = report.environment;
  const cores = env.cores;
  const lines: string[] = [
    `## bench ingest (${report.startedAt})`,
    '',
    `${cores} cores (${env.cpuModel}), Node ${env.node}, ${env.database}, cassandra-driver ` +
      `${env.cassandraDriver}; load average at start ${env.loadAverage.join(' ')}`,
    ...report.sources.map((s) => `- ${describeSource(s)}`),
    '',
    `### Medians of ${report.settings.runs} run(s)`,
    '',
    '| source | way | in flight | samples/s | MB/s | vs write loop | CPU us/sample: ingest / database | ' +
      `cores: ingest / database / rest | busy cores (of ${cores}) |`,
    '|---|---|--:|--:|--:|--:|--:|--:|--:|',
    ...report.summary.map(
      (r) =>
        `| ${r.source} | ${r.way} | ${r.concurrency} | ${r.samplesPerSecond.toFixed(0)} | ` +
        `${r.megabytesPerSecond.toFixed(1)} | ${x(r.vsWriteLoop)} | ` +
        `${r.loaderMicrosPerSample.toFixed(0)} / ${r.databaseMicrosPerSample?.toFixed(0) ?? '-'} | ` +
        `${split(r.cores, 2)} | ${busy(r.cores)} |`,
    ),
    '',
    '### With the database on a host of its own',
    '',
    'Here the ingest and the database share the cores. From the CPU each used per sample: the ' +
      'rate the ingest could reach with a core per process (one; two for workers, and for rpc ' +
      'the client and the loader), and what ' +
      `the database could take on ${cores} cores of its own; a separate database host gives ` +
      'about the smaller of the two.',
    '',
    '| source | way | ingest alone, samples/s | database alone, samples/s | projected | here |',
    '|---|---|--:|--:|--:|--:|',
    ...report.summary.map((r) => {
      const processes = r.way === 'workers' || r.way === 'rpc' ? 2 : 1;
      const ingest = (processes * 1e6) / r.loaderMicrosPerSample;
      const database =
        r.databaseMicrosPerSample === null ? null : (cores * 1e6) / r.databaseMicrosPerSample;
      const projected = database === null ? ingest : Math.min(ingest, database);
      return (
        `| ${r.source} | ${r.way} | ${ingest.toFixed(0)} | ${database?.toFixed(0) ?? '-'} | ` +
        `${projected.toFixed(0)} | ${r.samplesPerSecond.toFixed(0)} |`
      );
    }),
    '',
    '### Goals',
    '',
    '| goal | target | measured |',
    '|---|--:|--:|',
    ...goalRows(report),
    '',
    '### All runs',
    '',
    '| source | way | in flight | run | samples | samples/s | MB/s | wall s | ' +
      'CPU s: ingest / database / rest | schema s | settle s |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    ...report.runs.map(
      (r) =>
        `| ${r.source} | ${r.way} | ${r.concurrency} | ${r.run} | ${r.samples} | ` +
        `${r.samplesPerSecond.toFixed(0)} | ${r.megabytesPerSecond.toFixed(1)} | ` +
        `${r.wallSeconds.toFixed(2)} | ${split(r.cpuSeconds, 1)} | ` +
        `${r.schemaSeconds.toFixed(1)} | ${r.settleSeconds.toFixed(1)} |`,
    ),
  ];
  if (report.coldStart) {
    const cs = report.coldStart;
    lines.push(
      '',
      `### Local node cold start (jars cached), median of ${cs.runs.length}: ` +
        `${cs.medianStartSeconds.toFixed(1)} s to CQL (stop ${cs.medianStopSeconds.toFixed(1)} s)`,
      '',
      '| run | stop s | start to CQL s |',
      '|---|---|---|',
      ...cs.runs.map(
        (r) => `| ${r.run} | ${r.stopSeconds.toFixed(1)} | ${r.startSeconds.toFixed(1)} |`,
      ),
    );
  }
  lines.push(
    '',
    'Ways: `write-loop` is the driver alone writing the same rows from memory, two prepared ' +
      'INSERTs per sample (data and metadata), unbatched: the ceiling. `folder` is `ingest` ' +
      'reading the files, `webdataset` and `parquet` the same samples as tar shards and a ' +
      "Parquet file, `rpc` the TypeScript SDK's `ingest()` through a loader process on this " +
      "machine (its CPU counted as the ingest's), `workers` the command `ingest --workers 2`. " +
      'Each run writes into a fresh keyspace whose tables exist (made untimed); the recount ' +
      'at the end of an ingest is left out. Ratios are per round, then their median. Cores: ' +
      'CPU seconds per wall second; rest: every other process on the machine.',
  );
  if (report.notes.length > 0) lines.push('', ...report.notes.map((n) => `- ${n}`));
  lines.push('', `figures: ${report.jsonPath}`);
  return `${lines.join('\n')}\n`;
}

/** Samples/s of MNIST PNGs before this ingest (one logged batch and one read per sample). */
const BEFORE_MNIST_RATE = 2978;

function goalRows(report: IngestBenchReport): string[] {
  const rows: string[] = [];
  const name = (source: string): string => (source === 'mnist' ? 'MNIST-sized' : 'imagenet-sized');
  for (const r of report.summary) {
    if (r.way === 'write-loop') continue;
    const what = r.source === 'mnist' ? 'samples/s' : 'MB/s';
    rows.push(
      `| ${name(r.source)}, ${r.way} (c=${r.concurrency}): ${what} against the write loop | ` +
        `>= 0.8 | ${x(r.vsWriteLoop)} |`,
    );
    if (r.source === 'mnist') {
      rows.push(
        `| MNIST-sized, ${r.way} (c=${r.concurrency}): samples/s against ${BEFORE_MNIST_RATE}/s before | ` +
          `>= 3x | ${(r.samplesPerSecond / BEFORE_MNIST_RATE).toFixed(2)}x |`,
      );
    }
    if (r.way === 'rpc') {
      rows.push(
        `| ${name(r.source)}, rpc (c=${r.concurrency}): samples/s against \`ingest\` from files | ` +
          `>= 0.8 | ${x(r.vsFolder)} |`,
      );
    }
  }
  return rows;
}

function x(ratio: number | null): string {
  return ratio === null ? '-' : `${ratio.toFixed(2)}x`;
}

function describeSource(s: IngestSourceInfo): string {
  const kind = s.source === 'jpeg100k' ? 'JPEGs, stored as they are' : 'MNIST PNGs';
  return (
    `${s.source}: ${s.samples} ${kind}, ${(s.bytes / 1e6).toFixed(1)} MB, mean ` +
    `${size(s.meanBytes)} (${size(s.minBytes)} to ${size(s.maxBytes)}), keyspace ${s.keyspace}`
  );
}

function size(bytes: number): string {
  return bytes >= 1000 ? `${(bytes / 1000).toFixed(1)} kB` : `${bytes.toFixed(0)} B`;
}

function split(s: CpuSplit, digits: number): string {
  const f = (v: number | null): string => (v === null ? '-' : v.toFixed(digits));
  return `${f(s.loader)} / ${f(s.database)} / ${f(s.rest)}`;
}

function busy(c: CpuSplit): string {
  return (c.loader + (c.database ?? 0) + (c.rest ?? 0)).toFixed(2);
}
