import { formatCeilingReport } from '../ceiling/runCeilingBench.js';
import { formatConcurrencyReport } from '../concurrency/formatConcurrencyReport.js';
import { formatLatencyReport } from '../latency/formatLatencyReport.js';
import { formatScaleReport } from '../scale/formatScaleReport.js';
import { formatStreamReport } from '../stream/formatStreamReport.js';
import { markdownTables, type DocTableName } from '../report/docTables.js';
import type { BenchSuiteReport } from './BenchSuiteReport.js';
import type { SuiteTarget } from './suiteTargets.js';

/** A target's figure: ratios with two decimals, larger figures whole. */
function figure(value: number | undefined): string {
  if (value === undefined) return '-';
  return Math.abs(value) >= 20 ? Math.round(value).toLocaleString('en-US') : value.toFixed(2);
}

/**
 * The targets as a Markdown table: the figure in each placement and whether the
 * pinned one (else the unpinned one) meets the target. @internal
 */
export function targetsTable(targets: readonly SuiteTarget[]): string[] {
  return [
    '| target | goal | pinned | unpinned | met | from |',
    '|---|---|--:|--:|---|---|',
    ...targets.map(
      (t) =>
        `| ${t.name} | ${t.target} | ${figure(t.measured.pinned)} | ${figure(t.measured.unpinned)} | ` +
        `${t.met === undefined ? 'not run' : t.met ? 'yes' : 'no'} | ${t.source} |`,
    ),
  ];
}

/**
 * The suite's Markdown: the command, the environment, the targets, then every part's own
 * table under a heading. @internal
 */
export function formatSuiteReport(report: BenchSuiteReport): string {
  const env = report.environment;
  const lines = [
    `# scylla-loader benchmark suite${report.quick ? ' (quick mode)' : ''}`,
    '',
    `Command: \`${report.command}\`, started ${report.startedAt}, took ${Math.round(report.seconds)} s.`,
    `Machine: ${env.cores} cores (${env.cpuModel}), ${env.memoryGiB.toFixed(0)} GiB, ${env.kernel}; ` +
      `Node ${env.node}, cassandra-driver ${env.cassandraDriver}, @grpc/grpc-js ${env.grpcJs}, ` +
      `database ${env.database}.`,
    '',
    '## Targets',
    '',
    ...targetsTable(report.targets),
    '',
  ];
  const section = (title: string, body: string): void => {
    lines.push(`## ${title}`, '', body.trimEnd(), '');
  };
  for (const [payload, stream] of Object.entries(report.stream)) {
    section(`A-C: tight loop and service at 0 ms (${payload} payload)`, formatStreamReport(stream));
  }
  if (report.latency) {
    section('D: under injected latency', formatLatencyReport(report.latency));
    if (report.latencyVsA.length > 0) {
      lines.push(
        'Relative to A (the tight loop at 0 ms, no proxy, same placement):',
        '',
        '| placement | scenario | routes | RTT ms | samples/s | x A |',
        '|---|---|---|--:|--:|--:|',
        ...report.latencyVsA.map(
          (r) =>
            `| ${r.placement} | ${r.scenario} | ${r.routes} | ${r.rttMs} | ` +
            `${Math.round(r.samplesPerSecond).toLocaleString('en-US')} | ${r.ratioToA.toFixed(2)} |`,
        ),
        '',
      );
    }
    if (report.files.chart) lines.push('![samples/s against injected round trip](latency.svg)', '');
  }
  if (report.concurrency) {
    section('F: concurrent streams', formatConcurrencyReport(report.concurrency));
  }
  if (report.scale) section('E: scale', formatScaleReport(report.scale));
  if (report.ceiling) section('G: the gRPC leg', formatCeilingReport(report.ceiling));
  return `${lines.join('\n')}\n`;
}

/**
 * Every part's tables under its name on the performance page (`bench suite --docs`): the
 * targets, A-C (each payload's tables in turn), D, F, E and G. @internal
 */
export function suiteDocTables(report: BenchSuiteReport): Partial<Record<DocTableName, string>> {
  const streams = Object.values(report.stream).map((s) => markdownTables(formatStreamReport(s)));
  return {
    'suite-targets': `${targetsTable(report.targets).join('\n')}\n`,
    ...(streams.length > 0 ? { stream: streams.join('\n') } : {}),
    ...(report.latency ? { latency: markdownTables(formatLatencyReport(report.latency)) } : {}),
    ...(report.concurrency
      ? { concurrency: markdownTables(formatConcurrencyReport(report.concurrency)) }
      : {}),
    ...(report.scale ? { scale: markdownTables(formatScaleReport(report.scale)) } : {}),
    ...(report.ceiling ? { ceiling: markdownTables(formatCeilingReport(report.ceiling)) } : {}),
  };
}
