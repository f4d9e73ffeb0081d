import type { CpuSplit, IngestSourceInfo } from './IngestBenchReport.js';
import type { IngestBenchReport } from './runIngestBench.js';

/**
 * The report as Markdown: medians per source and concurrency, every run, the cold starts, and
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
    '| source | concurrency | samples/s | MB/s | wall s | CPU s: loader / database / rest | ' +
      `cores: loader / database / rest | busy cores (of ${cores}) |`,
    '|---|---|---|---|---|---|---|---|',
    ...report.summary.map(
      (r) =>
        `| ${r.source} | ${r.concurrency} | ${r.samplesPerSecond.toFixed(0)} | ` +
        `${r.megabytesPerSecond.toFixed(1)} | ${r.wallSeconds.toFixed(2)} | ` +
        `${split(r.cpuSeconds, 1)} | ${split(r.cores, 2)} | ${busy(r.cores)} |`,
    ),
    '',
    '### All runs',
    '',
    '| source | concurrency | run | samples | samples/s | MB/s | wall s | write s | ' +
      'CPU s: loader / database / rest | cores: loader / database / rest | schema s | settle s |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...report.runs.map(
      (r) =>
        `| ${r.source} | ${r.concurrency} | ${r.run} | ${r.samples} | ` +
        `${r.samplesPerSecond.toFixed(0)} | ${r.megabytesPerSecond.toFixed(1)} | ` +
        `${r.wallSeconds.toFixed(2)} | ${r.writeSeconds.toFixed(2)} | ${split(r.cpuSeconds, 1)} | ` +
        `${split(r.cores, 2)} | ${r.schemaSeconds.toFixed(1)} | ${r.settleSeconds.toFixed(1)} |`,
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
    'Wall s: `ingestDataset` with the keyspace already created (an exists check, a logged ' +
      'batch of data and metadata row per sample, then the recount); write s: until the last ' +
      'sample was written. Cores: CPU seconds per wall second. Rest: every other process on ' +
      'the machine.',
  );
  if (report.notes.length > 0) lines.push('', ...report.notes.map((n) => `- ${n}`));
  lines.push('', `figures: ${report.jsonPath}`);
  return `${lines.join('\n')}\n`;
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
