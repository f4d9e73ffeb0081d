import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDbClient, type DbConfig, invalidArgument } from '../../src/core/index.js';
import { startLocalCluster } from '../../src/devdb/localCluster.js';
import { stopLocalCluster } from '../../src/devdb/stopLocalCluster.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';
import { admissionScenario } from './admissionScenario.js';
import { clientResetScenario } from './clientResetScenario.js';
import { dbToxicScenario } from './dbToxicScenario.js';
import { DB_TOXIC_KINDS } from './dbToxics.js';
import type { FaultBed } from './FaultBed.js';
import type { FaultsBenchReport } from './FaultsBenchReport.js';
import { loaderHandoffScenario } from './loaderHandoffScenario.js';
import { loaderKillScenario } from './loaderKillScenario.js';
import { mixedFaultsScenario } from './mixedFaultsScenario.js';
import { nodeHangScenario } from './nodeHangScenario.js';
import { nodeKillScenario } from './nodeKillScenario.js';
import { prepareFaultDataset } from './prepareFaultDataset.js';
import { rollingRestartScenario } from './rollingRestartScenario.js';
import type { ScenarioResult } from './ScenarioResult.js';
import type { ScenarioScale } from './ScenarioScale.js';
import { writeReportJson } from '../report/reportJson.js';

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
  /** First address of the ring's nodes (default 127.0.0.31). */
  ringFirstAddress?: string;
  outDir: string;
  progress: BenchProgressFactory;
  log: (line: string) => void;
  signal?: AbortSignal;
}

/** Where a scenario runs: the single node, the single node through toxiproxy, the ring. */
type Bed = 'node' | 'network' | 'ring';

/** One fault scenario of `bench faults`, as data: its name, its bed and how it runs. */
interface FaultScenario {
  name: string;
  bed: Bed;
  run: (bed: FaultBed, scale: ScenarioScale, mixedFaults: number) => Promise<ScenarioResult>;
}

/** Every scenario, in the order they run. */
const FAULT_SCENARIOS: readonly FaultScenario[] = [
  { name: 'loader SIGKILL', bed: 'node', run: (b, s) => loaderKillScenario(b, s, 'SIGKILL') },
  { name: 'loader SIGTERM', bed: 'node', run: (b, s) => loaderKillScenario(b, s, 'SIGTERM') },
  { name: 'loader hand-off', bed: 'node', run: (b, s) => loaderHandoffScenario(b, s) },
  { name: 'admission', bed: 'node', run: (b, s) => admissionScenario(b, s) },
  ...DB_TOXIC_KINDS.map((kind): FaultScenario => ({
    name: `db ${kind}`,
    bed: 'network',
    run: (b, s) => dbToxicScenario(b, s, kind),
  })),
  { name: 'client reset', bed: 'network', run: (b, s) => clientResetScenario(b, s) },
  {
    name: 'mixed',
    bed: 'network',
    run: (b, s, faults) => mixedFaultsScenario(b, { faults, epochs: s === 'quick' ? 3 : 10 }),
  },
  { name: 'node SIGKILL', bed: 'ring', run: (b, s) => nodeKillScenario(b, s) },
  { name: 'node SIGSTOP', bed: 'ring', run: (b, s) => nodeHangScenario(b, s) },
  { name: 'rolling restart', bed: 'ring', run: (b, s) => rollingRestartScenario(b, s) },
];

/**
 * Runs every fault scenario (long forms, or quick ones) and writes the JSON report: the loader
 * and network scenarios and the mixed run against the given database node, the node scenarios
 * against a 3-node ring started for the occasion in a temporary folder (replication 2) and
 * stopped and removed at the end. Every loader and toxiproxy it starts is ended whatever
 * happens.
 *
 * @internal
 */
export async function runFaultsBench(
  options: FaultsBenchOptions,
): Promise<{ report: FaultsBenchReport; file: string }> {
  const scale: ScenarioScale = options.quick ? 'quick' : 'long';
  const mixedFaults = options.mixedFaults ?? (options.quick ? 12 : 50);
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
  const on = (bed: Bed): FaultScenario[] =>
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
  const pids = new Set<number>();
  const run = async (bed: FaultBed, scenarios: FaultScenario[]): Promise<void> => {
    for (const scenario of scenarios) {
      options.signal?.throwIfAborted();
      progress.log(`scenario ${done + 1}/${planned}: ${scenario.name}`);
      const result = await scenario.run(bed, scale, mixedFaults);
      report.scenarios.push(result);
      const v = result.verdict;
      progress.log(
        `  ${result.scenario}: ${result.faultCount} faults, ${v.delivered} samples, ` +
          `lost ${v.lost}, duplicated ${v.duplicated}, foreign ${v.foreign}, longest stall ` +
          `${(v.longestStallMs / 1000).toFixed(2)} s, ${v.reconnects} reconnects, ` +
          `${result.loaderCrashes} loader crashes (${result.seconds.toFixed(0)} s)`,
      );
      progress.update(++done);
    }
  };
  const log = (line: string): void => {
    if (!/serving on|^\[.*\] fault /.test(line)) progress.log(line);
  };

  try {
    const client = await createDbClient(options.db);
    try {
      const data = await prepareFaultDataset(client, {
        dataset: 'bench_faults_1500',
        samples: 1500,
        sampleBytes: 1000,
        replicationFactor: 1,
      });
      const bed: FaultBed = {
        db: options.db,
        client,
        data,
        ...(options.toxiproxy ? { toxiproxy: options.toxiproxy } : {}),
        onSpawn: (pid) => pids.add(pid),
        log,
      };
      await run(bed, single);
      if (options.toxiproxy) await run(bed, network);
    } finally {
      await client.shutdown();
    }
    if (!options.skipRing && ring.length > 0)
      await runOnRing(options, log, (bed) => run(bed, ring));
  } finally {
    progress.stop();
  }

  const file = path.join(options.outDir, `faults-${Date.now()}.json`);
  await writeReportJson(file, report);
  return { report, file };
}

/** Starts the 3-node ring, ingests its dataset, runs `body`, then stops and removes it. */
async function runOnRing(
  options: FaultsBenchOptions,
  log: (line: string) => void,
  body: (bed: FaultBed) => Promise<void>,
): Promise<void> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'sl-bench-faults-ring-'));
  try {
    log('starting a 3-node ring (replication 2) for the node scenarios');
    const ring = await startLocalCluster({
      stateDir,
      nodes: 3,
      firstAddress: options.ringFirstAddress ?? '127.0.0.31',
      clusterName: 'scylla-loader-bench-faults',
      heapMb: 512,
      timeoutMs: 300_000,
      log: (line) => log(`  ${line}`),
    });
    const db: DbConfig = {
      ...options.db,
      contactPoints: ring.contactPoints,
      port: ring.port,
      localDataCenter: ring.localDataCenter,
    };
    const client = await createDbClient(db);
    try {
      const data = await prepareFaultDataset(client, {
        dataset: 'bench_faults_ring',
        samples: 2000,
        sampleBytes: 1000,
        replicationFactor: 2,
      });
      await body({ db, client, data, ringStateDir: stateDir, log });
    } finally {
      await client.shutdown();
    }
  } finally {
    await stopLocalCluster(stateDir).catch(() => undefined);
    await rm(stateDir, { recursive: true, force: true });
  }
}
