import { mkdir } from 'node:fs/promises';
import { DEFAULT_FLOW_CONTROL_WINDOW } from '../../src/client/index.js';
import type { DbConfig } from '../../src/core/index.js';
import { cpuMeter } from '../../test/support/index.js';
import { startBenchChild, type BenchChild } from '../stream/startBenchChild.js';
import { median } from '../stream/stats.js';
import { machineEnvironment } from '../../test/support/index.js';
import { ceilingScript, freePort } from './ceilingScripts.js';
import type { CeilingClientResult, GrpcClientChildConfig } from './grpcClientChild.js';
import type { GrpcServerChildConfig, GrpcServerChildResult } from './grpcServerChild.js';
import type { H2ClientChildConfig } from './h2ClientChild.js';
import type { H2ServerChildConfig, H2ServerChildResult } from './h2ServerChild.js';
import { reportPath, writeReportJson } from '../../test/support/index.js';

/** The legs `bench ceiling` compares. */
export type CeilingScenario = 'grpc' | 'grpc-framing-copy' | 'grpc-64k-window' | 'raw-http2';

/** Every scenario, in the order they run within a round. */
export const CEILING_SCENARIOS: readonly CeilingScenario[] = [
  'grpc',
  'raw-http2',
  'grpc-framing-copy',
  'grpc-64k-window',
];

/** Settings of {@link runCeilingBench}. */
export interface CeilingBenchOptions {
  /** Database the loader server connects to (`createLoaderServer` does; it is never read). */
  db: DbConfig;
  /** Samples per batch (default 128). */
  batchSize?: number;
  /** Bytes per sample (default 100,000). */
  sampleBytes?: number;
  /** Sample bytes to send per run (default 3 GB, quick 300 MB); rounded up to whole batches. */
  bytesPerRun?: number;
  /** Timed runs of each scenario, interleaved (default 3, quick 1). */
  runs?: number;
  quick?: boolean;
  /** Where the JSON goes (default `<stateRoot>/bench`). */
  outDir: string;
  /**
   * Write a CPU profile of every server child (`node --cpu-prof`) into this folder, named
   * `<scenario>-<round>.cpuprofile`.
   */
  cpuProfileDir?: string;
  /** Called with every child pid started. */
  onSpawn?: (pid: number) => void;
  log?: (line: string) => void;
}

/** One timed run. */
export interface CeilingRun {
  scenario: CeilingScenario;
  round: number;
  bytes: number;
  batches: number;
  wallSeconds: number;
  gigabytesPerSecond: number;
  batchesPerSecond: number;
  cpuSeconds: { server: number; client: number };
  cpuSecondsPerGigabyte: { server: number; client: number };
}

const GB = 1e9;
const GRPC_DEFAULT_WINDOW = 65_535;

/**
 * Scenario G, the service's own ceiling: one batch served from memory (no database reads)
 * through the real loader server and the SDK, next to a bare Node HTTP/2 stream of the same
 * bytes with the same 64 MiB windows, and the gRPC leg with grpc-js's default 64 KiB window
 * for reference. Each side runs in a child process of its own, so the CPU seconds (from
 * `/proc`, over the timed part) are each side's alone. Runs are interleaved round by round.
 */
export async function runCeilingBench(options: CeilingBenchOptions) {
  const quick = options.quick ?? false;
  const batchSize = options.batchSize ?? 128;
  const sampleBytes = options.sampleBytes ?? 100_000;
  const bytesPerRun = options.bytesPerRun ?? (quick ? 0.3 : 3) * GB;
  const rounds = options.runs ?? (quick ? 1 : 3);
  const batches = Math.max(1, Math.ceil(bytesPerRun / (batchSize * sampleBytes)));
  const warmupBatches = Math.min(batches, 8);
  const log = options.log ?? (() => undefined);
  const startedAt = new Date();
  const shape = { samples: batchSize, sampleBytes };

  const runs: CeilingRun[] = [];
  let messageBytes = 0;
  if (options.cpuProfileDir) await mkdir(options.cpuProfileDir, { recursive: true });
  for (let round = 1; round <= rounds; round++) {
    for (const scenario of CEILING_SCENARIOS) {
      const port = await freePort();
      let server: BenchChild<GrpcServerChildResult | H2ServerChildResult>;
      let client: BenchChild<CeilingClientResult>;
      const spawn = { ...(options.onSpawn ? { onSpawn: options.onSpawn } : {}) };
      const serverSpawn = {
        ...spawn,
        ...(options.cpuProfileDir
          ? {
              nodeFlags: [
                '--cpu-prof',
                '--cpu-prof-dir',
                options.cpuProfileDir,
                '--cpu-prof-name',
                `${scenario}-${round}.cpuprofile`,
              ],
            }
          : {}),
      };
      if (scenario === 'raw-http2') {
        const serverConfig: H2ServerChildConfig = { ...shape, port, batches, warmupBatches };
        server = startBenchChild(ceilingScript('h2ServerChild'), serverConfig, serverSpawn);
        await server.ready;
        const clientConfig: H2ClientChildConfig = { url: `http://127.0.0.1:${port}` };
        client = startBenchChild(ceilingScript('h2ClientChild'), clientConfig, spawn);
      } else {
        const serverConfig: GrpcServerChildConfig = {
          ...shape,
          db: options.db,
          port,
          batches,
          warmupBatches,
          framingCopy: scenario === 'grpc-framing-copy',
        };
        server = startBenchChild(ceilingScript('grpcServerChild'), serverConfig, serverSpawn);
        await server.ready;
        const clientConfig: GrpcClientChildConfig = {
          address: `127.0.0.1:${port}`,
          batchSize,
          ...(scenario === 'grpc-64k-window' ? { flowControlWindow: GRPC_DEFAULT_WINDOW } : {}),
        };
        client = startBenchChild(ceilingScript('grpcClientChild'), clientConfig, spawn);
      }
      try {
        await client.ready;
        const meter = cpuMeter({ server: server.pid, client: client.pid });
        server.go();
        client.go();
        const received = await client.result;
        const cpu = meter();
        const served = await server.result;
        messageBytes = served.messageBytes;
        const bytes = received.bytes;
        // The raw stream's bytes are whole messages; its batches are counted from them.
        const batchesReceived =
          scenario === 'raw-http2' ? received.bytes / served.messageBytes : received.batches;
        const gigabytes = bytes / GB;
        const serverCpu = cpu.server ?? Number.NaN;
        const clientCpu = cpu.client ?? Number.NaN;
        const run: CeilingRun = {
          scenario,
          round,
          bytes,
          batches: batchesReceived,
          wallSeconds: received.wallSeconds,
          gigabytesPerSecond: gigabytes / received.wallSeconds,
          batchesPerSecond: batchesReceived / received.wallSeconds,
          cpuSeconds: { server: serverCpu, client: clientCpu },
          cpuSecondsPerGigabyte: { server: serverCpu / gigabytes, client: clientCpu / gigabytes },
        };
        runs.push(run);
        log(
          `round ${round}/${rounds} ${scenario}: ${run.gigabytesPerSecond.toFixed(2)} GB/s, ` +
            `server ${run.cpuSecondsPerGigabyte.server.toFixed(2)} CPU s/GB, ` +
            `client ${run.cpuSecondsPerGigabyte.client.toFixed(2)} CPU s/GB`,
        );
      } finally {
        await Promise.all([client.stop(), server.stop()]);
      }
    }
  }

  const summary = summarize(runs);
  const jsonPath = reportPath(options.outDir, 'ceiling', startedAt);
  const report = {
    startedAt: startedAt.toISOString(),
    environment: machineEnvironment(),
    settings: {
      batchSize,
      sampleBytes,
      messageBytes,
      batchesPerRun: batches,
      runs: rounds,
      quick,
      flowControlWindow: DEFAULT_FLOW_CONTROL_WINDOW,
      referenceWindow: GRPC_DEFAULT_WINDOW,
    },
    runs,
    summary,
    jsonPath,
  };
  await writeReportJson(jsonPath, report);
  return report;
}

function summarize(runs: readonly CeilingRun[]) {
  const rows = CEILING_SCENARIOS.map((scenario) => {
    const of = runs.filter((r) => r.scenario === scenario);
    const m = (f: (r: CeilingRun) => number): number => median(of.map(f));
    return {
      scenario,
      runs: of.length,
      gigabytesPerSecond: m((r) => r.gigabytesPerSecond),
      batchesPerSecond: m((r) => r.batchesPerSecond),
      cpuSecondsPerGigabyte: {
        server: m((r) => r.cpuSecondsPerGigabyte.server),
        client: m((r) => r.cpuSecondsPerGigabyte.client),
      },
      ratioToRawHttp2: 0,
    };
  });
  const raw = rows.find((r) => r.scenario === 'raw-http2')?.gigabytesPerSecond ?? Number.NaN;
  for (const row of rows) row.ratioToRawHttp2 = row.gigabytesPerSecond / raw;
  return rows;
}

/** What {@link runCeilingBench} returns and writes. */
export type CeilingBenchReport = Awaited<ReturnType<typeof runCeilingBench>>;

/** The report as a Markdown table, with the settings under it. */
export function formatCeilingReport(report: CeilingBenchReport): string {
  const s = report.settings;
  const label: Record<CeilingScenario, string> = {
    grpc: 'gRPC: loader server -> SDK (64 MiB window)',
    'raw-http2': 'raw Node HTTP/2 stream (64 MiB window)',
    'grpc-framing-copy': 'gRPC, grpc-js copying each message behind its header (before)',
    'grpc-64k-window': 'gRPC, client window 64 KiB (grpc-js default)',
  };
  const lines = [
    `| leg | GB/s | batches/s | server CPU s/GB | client CPU s/GB | x raw HTTP/2 |`,
    '|---|---|---|---|---|---|',
    ...report.summary.map(
      (r) =>
        `| ${label[r.scenario]} | ${r.gigabytesPerSecond.toFixed(2)} | ` +
        `${r.batchesPerSecond.toFixed(1)} | ${r.cpuSecondsPerGigabyte.server.toFixed(3)} | ` +
        `${r.cpuSecondsPerGigabyte.client.toFixed(3)} | ${r.ratioToRawHttp2.toFixed(2)} |`,
    ),
    '',
    `Medians of ${s.runs} interleaved run(s) each; batch of ${s.batchSize} x ${s.sampleBytes} B ` +
      `(${(s.messageBytes / 1e6).toFixed(2)} MB encoded) sent ${s.batchesPerRun} times per run ` +
      `(${((s.batchesPerRun * s.batchSize * s.sampleBytes) / GB).toFixed(2)} GB); ` +
      `${report.environment.cores} cores, Node ${report.environment.node}, unpinned.`,
    `GB = 10^9 bytes (sample bytes for gRPC, stream bytes for raw HTTP/2); CPU from /proc over the timed part.`,
    `figures: ${report.jsonPath}`,
    '',
  ];
  return lines.join('\n');
}
