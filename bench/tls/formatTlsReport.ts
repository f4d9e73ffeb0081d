import { TLS_THROUGHPUT_GOAL, type TlsLegSummary } from './summarizeTlsRuns.js';

import type { TlsBenchReport } from './runTlsBench.js';

/** What the formatter reads of a report. */
export type TlsReportView = Pick<
  TlsBenchReport,
  'summary' | 'settings' | 'dataset' | 'seconds' | 'notes' | 'jsonPath'
> & { environment: { cores: number; loadAverage: number[] } };

/**
 * The Markdown of `bench tls`: a heading line with the settings, one row per leg (medians of
 * the runs, every figure with its unit in the header), then each TLS leg's throughput ratio
 * to plaintext beside the goal. Figures are stated, never judged by the exit code.
 */
export function formatTlsReport(report: TlsReportView): string {
  const s = report.settings;
  const d = report.dataset;
  const lines = [
    `bench tls: ${d.name}, ${d.samples} images of ${(d.meanBytes / 1e3).toFixed(1)} kB (mean), ` +
      `batches of ${s.batchSize}, one epoch per run through the TypeScript SDK, one loader ` +
      `per leg, one database node (${s.nodeAddress}) taking TLS and plaintext on the same ` +
      `port; medians of ${s.runs} run(s) per leg, legs interleaved; ` +
      `${report.seconds.toFixed(0)} s, ${report.environment.cores} cores, load average ` +
      `${report.environment.loadAverage.map((x) => x.toFixed(2)).join(' ')} at the start`,
    '',
    '| leg | MB/s at the client | samples/s | loader CPU s/GB | client CPU s/GB | database CPU s/GB | throughput / plaintext |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...report.summary.map(tlsRow),
    '',
    'MB/s and GB: payload bytes (the JPEGs) the client received, 1 MB = 1e6 bytes. CPU s/GB: ' +
      'CPU seconds of the loader process (/proc), of the SDK client process, and of the whole ' +
      'database node (other users of it too) per GB streamed. Throughput / plaintext: median ' +
      "over runs of the leg's MB/s over the plaintext leg's MB/s in the same run.",
    '',
    `Goal (issue 15): TLS keeps >= ${TLS_THROUGHPUT_GOAL} of plaintext throughput`,
    ...report.summary.filter((r) => r.leg !== 'plaintext').map(goalLine),
    ...(report.notes.length > 0 ? ['', ...report.notes.map((n) => `note: ${n}`)] : []),
    '',
    `figures: ${report.jsonPath}`,
    '',
  ];
  return lines.join('\n');
}

/** One leg's table row. @internal */
export function tlsRow(r: TlsLegSummary): string {
  const cpu = (v: number | null): string => (v === null ? 'n/a' : v.toFixed(2));
  const [lo, hi] = r.bytesPerSecondRange;
  const spread = r.runs > 1 ? ` (${(lo / 1e6).toFixed(0)}-${(hi / 1e6).toFixed(0)})` : '';
  return (
    `| ${r.leg} (${r.label}) | ${(r.bytesPerSecond / 1e6).toFixed(1)}${spread} | ` +
    `${r.samplesPerSecond.toFixed(0)} | ${cpu(r.cpuSecondsPerGB.loader)} | ` +
    `${cpu(r.cpuSecondsPerGB.client)} | ${cpu(r.cpuSecondsPerGB.database)} | ` +
    `${r.ratioToPlaintext === null ? 'n/a' : r.ratioToPlaintext.toFixed(2)} |`
  );
}

function goalLine(r: TlsLegSummary): string {
  if (r.ratioToPlaintext === null) return `- ${r.leg}: n/a (no plaintext run to compare with)`;
  const verdict = r.ratioToPlaintext >= TLS_THROUGHPUT_GOAL ? 'met' : 'not met';
  return (
    `- ${r.leg} (${r.label}): ${r.ratioToPlaintext.toFixed(2)} of plaintext ` +
    `(goal >= ${TLS_THROUGHPUT_GOAL}: ${verdict})`
  );
}
