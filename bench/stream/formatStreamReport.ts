import { formatMixingReport } from './formatMixingReport.js';
import { formatColumnsReport } from './formatColumnsReport.js';
import { formatLedgerReport } from './formatLedgerReport.js';
import { scenarioLabel } from './runStreamBench.js';
import type { StreamBenchReport } from './runStreamBench.js';

const num = (v: number | undefined, digits = 0): string =>
  v === undefined || !Number.isFinite(v)
    ? 'n/a'
    : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/**
 * The report as Markdown: the scenario x placement table (medians of the timed runs), the
 * mixture against the single source (with `--sources`), metadata columns (`--columns`) and the
 * training ledger (`--ledger`) against none, the tight loop's calibration, the
 * batch-layout micro-benchmark, and the environment.
 */
export function formatStreamReport(report: StreamBenchReport): string {
  const { settings, dataset, environment: env, layout } = report;
  const lines: string[] = [];
  lines.push(
    `## bench stream: ${dataset.samples} samples of ${num(dataset.meanBytes / 1e3, 1)} kB ` +
      `(${dataset.name}, ${num(dataset.totalBytes / 1e6, 0)} MB per epoch), batch ${settings.batchSize}`,
    '',
    `Medians of ${settings.runs} interleaved run(s) per row; CPU seconds over one epoch ` +
      '(the measured part only); × tight loop: median samples/s over the tight loop of the same ' +
      'placement (paired per run in brackets); db CPU s: as measured (less the background the ' +
      'database showed in the second before each round, nothing of ours running); reader CPU: ' +
      'of the loader (service rows) or of the loop itself (tight-loop rows), per GB and per sample.',
    '',
    '| placement | scenario | samples/s | MB/s | × tight loop | db CPU s | loader CPU s | ' +
      'client CPU s | loader CPU s/GB | reader CPU s/GB | reader CPU µs/sample | ' +
      'batch wait p50 / p99 ms |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const row of report.summary) {
    const tight = row.scenario === 'tight-loop' || row.scenario === 'tight-loop-grouped';
    const { db, dbNet, loader, client } = row.cpuSeconds;
    const cells = [
      row.placement,
      scenarioLabel(row),
      num(row.samplesPerSecond),
      num(row.megabytesPerSecond),
      row.scenario === 'tight-loop'
        ? '1.00'
        : `${num(row.ratioToTightLoop, 2)} (${num(row.pairedRatioToTightLoop, 2)})`,
      dbNet === undefined ? num(db, 2) : `${num(db, 2)} (${num(dbNet, 2)})`,
      tight ? '-' : num(loader, 2),
      num(client, 2),
      tight ? '-' : num(row.loaderCpuSecondsPerGB, 2),
      num(row.readerCpu?.secondsPerGB, 2),
      num(row.readerCpu?.microsPerSample, 1),
      row.waitMs ? `${num(row.waitMs.p50, 1)} / ${num(row.waitMs.p99, 1)}` : '-',
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  lines.push('');
  const mixing = formatMixingReport(report);
  if (mixing !== '') lines.push(mixing);
  const columns = formatColumnsReport(report);
  if (columns !== '') lines.push(columns);
  const ledger = formatLedgerReport(report);
  if (ledger !== '') lines.push(ledger);
  for (const placement of settings.placements) {
    for (const grouped of [false, true]) {
      const cal = report.runs.filter(
        (r) =>
          r.placement === placement &&
          r.phase === 'calibration' &&
          (r.scenario === 'tight-loop-grouped') === grouped,
      );
      if (cal.length === 0) continue;
      const kept = (grouped ? report.bestGroupedConcurrency : report.bestConcurrency)?.[placement];
      lines.push(
        `Tight-loop${grouped ? ' grouped' : ''} calibration (${placement}): ` +
          cal.map((r) => `C=${r.concurrency} ${num(r.samplesPerSecond)}/s`).join(', ') +
          `; kept C=${kept}.`,
      );
    }
  }
  for (const placement of settings.placements) {
    const bg = report.summary.find((r) => r.placement === placement)?.dbBackgroundCpuPerSecond;
    if (bg !== undefined) {
      lines.push(
        `Database background (${placement}, median over rounds): ${num(bg, 2)} CPU s per s.`,
      );
    }
  }
  if (settings.pinning) {
    lines.push(
      `Pinned: database on CPU ${settings.pinning.database}, loader and client (and the tight ` +
        `loop) on CPU ${settings.pinning.loaderAndClient}.`,
    );
  }
  lines.push(
    '',
    `### Batch layout: ${layout.samples} x ${num(layout.meanSampleBytes / 1e3, 0)} kB ` +
      `(${num(layout.payloadBytes / 1e6, 1)} MB), protobufjs through @grpc/proto-loader, ` +
      `${layout.iterations} iterations`,
    '',
    '| layout | encode ms median (min) | decode ms median (min) | encode GB/s | decode GB/s |',
    '|---|--:|--:|--:|--:|',
  );
  for (const r of layout.results) {
    lines.push(
      `| ${r.layout}: ${r.description} | ${num(r.encodeMs, 2)} (${num(r.encodeMinMs, 2)}) | ` +
        `${num(r.decodeMs, 3)} (${num(r.decodeMinMs, 3)}) | ${num(r.encodeGBps, 1)} | ` +
        `${num(r.decodeGBps, 1)} |`,
    );
  }
  lines.push(
    '',
    `Faster of the two candidates: ${layout.faster} by median encode + decode, ` +
      `${layout.fasterByMin} by the fastest` +
      (layout.faster === layout.fasterByMin
        ? '.'
        : ' (they disagree: allocator and GC noise outweighs the difference in the medians).'),
    '',
    `Environment: ${env.cores} cores (${env.cpuModel}), ${env.memoryGiB} GiB, ${env.kernel}, ` +
      `Node ${env.node}, cassandra-driver ${env.cassandraDriver}, grpc-js ${env.grpcJs}, ` +
      `protobufjs ${env.protobufjs}, ${env.database}; load average at start ` +
      `${env.loadAverage.join(' ')}; ${settings.connectionsPerHost} connections per host; ` +
      `server defaults: prefetch ${settings.serverDefaultPrefetch}, ` +
      `${settings.serverMaxInFlightPerStream} reads in flight per stream.`,
  );
  for (const note of report.notes) lines.push('', `Note: ${note}`);
  lines.push('', `JSON: ${report.jsonPath}`);
  return `${lines.join('\n')}\n`;
}
