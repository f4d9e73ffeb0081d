import type { CeilingBenchReport } from '../ceiling/runCeilingBench.js';
import type { ConcurrencyBenchReport } from '../concurrency/runConcurrencyBench.js';
import type { LatencyBenchReport } from '../latency/runLatencyBench.js';
import type { ScaleBenchReport } from '../scale/runScaleBench.js';
import type { BenchEnvironment } from '../../test/support/index.js';
import type { StreamBenchReport } from '../stream/runStreamBench.js';
import type { PhotoPresetName } from '../../src/datasets/photos/index.js';
import type { LatencyVsA, SuiteTarget } from './suiteTargets.js';

/** Everything the suite measured, as written to `suite.json`. */
export interface BenchSuiteReport {
  startedAt: string;
  seconds: number;
  quick: boolean;
  /** The exact command line that produced it. */
  command: string;
  environment: BenchEnvironment;
  /** `bench stream` per payload (A: tight loop, B: in-order prefetch 2, C: out-of-order). */
  stream: Partial<Record<PhotoPresetName, StreamBenchReport>>;
  latency?: LatencyBenchReport;
  concurrency?: ConcurrencyBenchReport;
  scale?: ScaleBenchReport;
  ceiling?: CeilingBenchReport;
  targets: SuiteTarget[];
  /** Scenario D's rows as a share of A in the same placement. */
  latencyVsA: LatencyVsA[];
  files: { json: string; markdown: string; chart?: string };
}
