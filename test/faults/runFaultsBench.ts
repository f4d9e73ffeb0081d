import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDbClient, type DbConfig, invalidArgument } from '../../src/core/index.js';
import { startLocalCluster } from '../../src/devdb/index.js';
import { stopLocalCluster } from '../../src/devdb/index.js';
import type { BenchProgressFactory } from '../support/index.js';
import { FAULT_SCENARIOS } from './faultScenarios.js';
import { prepareFaultDataset } from './prepareFaultDataset.js';
import {
  type FaultBed,
  runScenario,
  type ScenarioResult,
  type ScenarioScale,
} from './runScenario.js';
import { writeReportJson } from '../support/index.js';

/** How `bench faults` runs. @internal */
export interface FaultsBenchOptions {
  /** The single database node the loader, network and mixed scenarios use. */
  db: DbConfig;
  quick: boolean;
  /** Faults of the mixed run (default 50, quick 12). */
  mixedFaults?: number;
  /** Path of toxiproxy-server; without it the network and mixed scenarios are skipped. */
  toxiproxy?: string;
  /** Leave out the 3-node ring (and its scenarios). */
  skipRing?: boolean;
  /** Run only the scenarios of these names (e.g. `mixed`, `node SIGSTOP`); absent: all. */
  scenarios?: string[];
  outDir: string;
  progress: BenchProgressFactory;
  log: (line: string) => void;
  signal?: AbortSignal;
}

/** What `bench faults` measured. @internal */
export interface FaultsBenchReport {
  quick: boolean;
  startedAt: string;
  cores: number;
  node: string;
  scenarios: ScenarioResult[];
  /** Scenarios that could not run (e.g. toxiproxy missing), with why. */
  skipped: { scenario: string; reason: string }[];
}

type FaultScenario = (typeof FAULT_SCENARIOS)[number];

/**
 * Runs every fault scenario (long forms, or quick ones) and writes the JSON report: the loader
 * and network scenarios and the mixed run against the given database node, the node scenarios
 * against a 3-node ring started for the occasion in a temporary folder (replication 3) and
 * stopped and removed at the end. Every loader and toxiproxy it starts is ended whatever
 * happens.
 *
 * @internal
 */
export async function runFaultsBench(
  options: FaultsBenchOptions,
): Promise<{ report: FaultsBenchReport; file: string }> {
  const scale: ScenarioScale = options.quick ? 'quick' : 'long';
  const mixed = options.mixedFaults === undefined ? {} : { faults: options.mixedFaults };
  const report: FaultsBenchReport = {
    quick: options.quick,
    startedAt: new Date().toISOString(),
    cores: os.availableParallelism(),
    node: process.version,
    scenarios: [],
    skipped: [],
  };
  const names = FAULT_SCENARIOS.map((f) => f.name);
  const unknown = (options.scenarios ?? []).filter((name) => !names.includes(name));
  if (unknown.length > 0) {
    throw invalidArgument(
      `unknown fault scenario ${unknown.map((n) => `'${n}'`).join(', ')}; ` +
        `the scenarios are ${names.map((n) => `'${n}'`).join(', ')}`,
    );
  }
  const on = (bed: FaultScenario['bed']): FaultScenario[] =>
    FAULT_SCENARIOS.filter(
      (f) => f.bed === bed && (!options.scenarios || options.scenarios.includes(f.name)),
    );
  const [single, network, ring] = [on('node'), on('network'), on('ring')];
  if (!options.toxiproxy) {
    for (const { name } of network) {
      report.skipped.push({ scenario: name, reason: 'toxiproxy-server is not installed' });
    }
  }
  const planned =
    single.length + (options.toxiproxy ? network.length : 0) + (options.skipRing ? 0 : ring.length);
  const progress = options.progress('faults', planned, 'scenarios');
  let done = 0;
  const run = async (bed: FaultBed, scenarios: FaultScenario[]): Promise<void> => {
    for (const scenario of scenarios) {
      options.signal?.throwIfAborted();
      progress.log(`scenario ${done + 1}/${planned}: ${scenario.name}`);
      const result = await runScenario(bed, scenario.spec(scale, bed, mixed));
      report.scenarios.push(result);
      progress.log(`  ${scenarioRow(result)} (${result.seconds.toFixed(0)} s)`);
      // Where the stalls fell against the faults, in seconds from the start of the streams.
      const s = (ms: number): string => (ms / 1000).toFixed(2);
      progress.log(
        `  faults: ${result.faultWindows.map((w) => `${w.kind} ${s(w.fromMs)}-${s(w.toMs)}`).join(', ')}; ` +
          `longest waits: ${result.longestWaits.map((w) => `rank ${w.rank} ${s(w.atMs - w.ms)}-${s(w.atMs)}`).join(', ')}`,
      );
      for (const c of result.reconnectCauses.slice(0, 4)) {
        progress.log(`  reconnects: ${c.count} x ${c.cause} (first at ${s(c.firstAtMs)})`);
      }
      progress.update(++done);
    }
  };
  const log = (line: string): void => {
    if (!/serving on|^\[.*\] fault /.test(line)) progress.log(line);
  };

  try {
    await withBed(options.db, 'bench_faults_1500', 1500, 1, log, async (bed) => {
      await run(bed, single);
      if (options.toxiproxy) await run({ ...bed, toxiproxy: options.toxiproxy }, network);
    });
    if (!options.skipRing && ring.length > 0) {
      await runOnRing(options.db, log, (bed) => run(bed, ring));
    }
  } finally {
    progress.stop();
  }

  const file = path.join(options.outDir, `faults-${Date.now()}.json`);
  await writeReportJson(file, report);
  return { report, file };
}

/** Starts the 3-node ring, ingests its dataset, runs `body`, then stops and removes it. */
async function runOnRing(
  single: DbConfig,
  log: (line: string) => void,
  body: (bed: FaultBed) => Promise<void>,
): Promise<void> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-faults-ring-'));
  try {
    log('starting a 3-node ring (replication 3) for the node scenarios');
    const ring = await startLocalCluster({
      stateDir,
      nodes: 3,
      firstAddress: '127.0.0.31',
      clusterName: 'scylla-loader-bench-faults',
      heapMb: 512,
      timeoutMs: 300_000,
      log: (line) => log(`  ${line}`),
    });
    const { contactPoints, port, localDataCenter } = ring;
    const db: DbConfig = { ...single, contactPoints, port, localDataCenter };
    await withBed(db, 'bench_faults_ring', 2000, 3, log, (bed) =>
      body({ ...bed, ringStateDir: stateDir }),
    );
  } finally {
    await stopLocalCluster(stateDir).catch(() => undefined);
    await rm(stateDir, { recursive: true, force: true });
  }
}

/** Connects to `db`, makes the dataset (1 kB samples) if missing, runs `body`, disconnects. */
async function withBed(
  db: DbConfig,
  dataset: string,
  samples: number,
  replicationFactor: number,
  log: (line: string) => void,
  body: (bed: FaultBed) => Promise<void>,
): Promise<void> {
  const client = await createDbClient(db);
  try {
    const data = await prepareFaultDataset(client, {
      dataset,
      samples,
      sampleBytes: 1000,
      replicationFactor,
    });
    await body({ db, client, data, log });
  } finally {
    await client.shutdown();
  }
}

/** One scenario's row of the `bench faults` table. */
function scenarioRow(s: ScenarioResult): string {
  const v = s.verdict;
  const failed = v.failedRanks > 0 ? ` (${v.failedRanks} ranks gave up)` : '';
  return (
    `| ${s.scenario} | ${s.faultCount} | ${v.delivered} | ${v.lost}${failed} | ${v.duplicated} | ` +
    `${v.foreign} | ${(v.longestStallMs / 1000).toFixed(2)} s | ` +
    `${(s.longestStallPastFaultMs / 1000).toFixed(2)} s | ${v.reconnects} | ${s.loaderCrashes} |`
  );
}

/**
 * The table of `bench faults`, Markdown: one row per scenario with the faults injected, the
 * samples delivered and the checker's verdict (lost, duplicated, foreign), the longest wait of
 * a trainer between two batches, the reconnects, and the loader exits nobody caused.
 *
 * @internal
 */
export function formatFaultsReport(report: FaultsBenchReport): string {
  const lines = [
    '| scenario | faults injected | samples delivered | lost | duplicated | foreign | longest stall | of it past the fault | reconnects | loader crashes |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  const all = (figure: (s: ScenarioResult) => number): string =>
    `**${report.scenarios.reduce((sum, s) => sum + figure(s), 0)}**`;
  lines.push(
    ...report.scenarios.map(scenarioRow),
    `| **all** | ${all((s) => s.faultCount)} | ${all((s) => s.verdict.delivered)} | ` +
      `${all((s) => s.verdict.lost)} | ${all((s) => s.verdict.duplicated)} | ` +
      `${all((s) => s.verdict.foreign)} | | | | ${all((s) => s.loaderCrashes)} |`,
  );
  for (const s of report.skipped) lines.push('', `skipped ${s.scenario}: ${s.reason}`);
  return `${lines.join('\n')}\n`;
}
