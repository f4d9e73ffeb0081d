import { type DbConfig, invalidArgument } from '../../src/core/index.js';
import {
  benchPaths,
  DEFAULT_SAMPLES,
  defaultDatasetName,
  type BenchProgressFactory,
  type Placement,
} from '../stream/StreamBenchOptions.js';
import { DEFAULT_CONGESTED, type CongestedRoute } from './routeToxics.js';

/** Settings of {@link runLatencyBench}. */
export interface LatencyBenchOptions {
  /** The database; the proxies forward to its first contact point and port. */
  db: DbConfig;
  /** Pid of the local database node, for its CPU seconds; undefined for another cluster. */
  dbPid: number | undefined;
  /** The `toxiproxy-server` binary. */
  toxiproxy: string;
  samples: number;
  dataset: string;
  /** Measured runs of every scenario, interleaved; the table shows medians. */
  runs: number;
  batchSize: number;
  /**
   * Pinned: the database node and toxiproxy on one core, loaders and trainers on the other;
   * unpinned: wherever the OS puts them. Pinned is skipped (with a note) where it cannot run.
   */
  placements: Placement[];
  /**
   * Rate of the paced trainer (a simulated training step of batch / rate per batch) whose
   * waits are the stalls reported next to the full-speed figures; absent: no paced runs.
   */
  trainerSamplesPerSecond: number | undefined;
  /** Round trips injected on the main route, ms. */
  rttsMs: number[];
  /** Main route's round trip when the congested route is added (absent: not run). */
  congestedAtRttMs: number | undefined;
  congested: CongestedRoute;
  /** Share of each stream's first batches left out of the batch-wait figures. */
  warmupFraction: number;
  imageRoot: string;
  outDir: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** What a caller of `bench latency` may set; everything else has a default. */
export interface LatencyBenchInput {
  db: DbConfig;
  dbPid: number | undefined;
  toxiproxy: string;
  /** The repository's `.state` folder. */
  stateRoot: string;
  /** About a minute: 300 samples, one run, round trips 0 and 20 ms (and the congested route). */
  quick?: boolean;
  samples?: number;
  runs?: number;
  batchSize?: number;
  rttsMs?: number[];
  placements?: Placement[];
  /** 0: no paced runs. */
  trainerSamplesPerSecond?: number;
  dataset?: string;
  outDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Default rate of the paced trainer, samples/s: below what the loader streams here at 0 ms
 * (about 1,500-2,000 samples/s of ~110 kB), as a trainer the loader should keep fed.
 */
export const DEFAULT_TRAINER_SAMPLES_PER_SECOND = 1000;

/** Round trips of the full mode, ms. */
export const DEFAULT_RTTS_MS = [0, 20, 150];

/**
 * Fills in the defaults of `bench latency` (N=3000 on the `bench stream` dataset, K=3, round
 * trips 0, 20 and 150 ms, batches of 64, the congested route at 20 ms) or of its quick mode,
 * and checks the numbers. Batches are smaller than `bench stream`'s so that an epoch has
 * enough of them for a batch-wait p99.
 */
export function resolveLatencyBenchOptions(input: LatencyBenchInput): LatencyBenchOptions {
  const quick = input.quick ?? false;
  const samples = input.samples ?? (quick ? 300 : DEFAULT_SAMPLES);
  const runs = input.runs ?? (quick ? 1 : 3);
  const batchSize = input.batchSize ?? (quick ? 32 : 64);
  const rttsMs = [...new Set(input.rttsMs ?? (quick ? [0, 20] : DEFAULT_RTTS_MS))].sort(
    (a, b) => a - b,
  );
  const check = (what: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${what} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  check('--samples', samples, 1, 10_000_000);
  check('--runs', runs, 1, 1000);
  check('--batch-size', batchSize, 1, 8192);
  if (rttsMs.length === 0) throw invalidArgument('at least one round trip is needed');
  for (const rtt of rttsMs) check('round trip (ms)', rtt, 0, 10_000);
  const trainerRate = input.trainerSamplesPerSecond ?? DEFAULT_TRAINER_SAMPLES_PER_SECOND;
  check('--trainer-rate', trainerRate, 0, 1_000_000);
  const placements = [
    ...new Set<Placement>(input.placements ?? (quick ? ['unpinned'] : ['pinned', 'unpinned'])),
  ];
  if (placements.length === 0) throw invalidArgument('at least one placement is needed');
  const paths = benchPaths(input.stateRoot);
  return {
    db: input.db,
    dbPid: input.dbPid,
    toxiproxy: input.toxiproxy,
    samples,
    dataset: input.dataset ?? defaultDatasetName(samples),
    runs,
    batchSize,
    placements,
    trainerSamplesPerSecond: trainerRate === 0 ? undefined : trainerRate,
    rttsMs,
    congestedAtRttMs: rttsMs.includes(20) ? 20 : rttsMs[0],
    congested: DEFAULT_CONGESTED,
    warmupFraction: 0.1,
    imageRoot: paths.imageRoot,
    outDir: input.outDir ?? paths.outDir,
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
