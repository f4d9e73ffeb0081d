import type { ConnectionFuzzReport } from './ConnectionFuzzReport.js';
import type { FuzzOutcome } from './FuzzOutcome.js';

/** Figures of one `runFuzzBench`: what was sent, what came back, how the loader held up. @internal */
export interface FuzzReport extends FuzzOutcome {
  /** fast-check seed of the generated requests (the same seed sends the same requests). */
  seed: number;
  connections: ConnectionFuzzReport;
  /** How the loader process ended by itself, if it did (a crash); undefined: it never did. */
  crash: string | undefined;
  /** StreamBatches streams that ended INTERNAL or UNKNOWN, by the loader's own metric. */
  internalErrors: number;
  /** Loader processes alive at the end (a `serve --workers N` primary and its workers). */
  processes: number;
  /** Workers the primary logged as dead during the run (0: none crashed). */
  workerDeaths: number;
  /** HTTP status of `/healthz` at the end (200: every worker serving). */
  healthzAfter: number;
  /**
   * RSS of the loader (all its processes) before the first fuzzed request, after the last,
   * and at its peak.
   */
  rssBeforeBytes: number;
  rssAfterBytes: number;
  rssPeakBytes: number;
  /** Open file descriptors before and after (hostile connections closed). */
  fdsBefore: number;
  fdsAfter: number;
  /** Samples of a normal epoch streamed while hostile connections were held, and after. */
  normalSamplesWhileHeld: number;
  normalSamplesAfter: number;
  /** Samples the dataset holds (what a normal epoch must yield). */
  datasetSamples: number;
  seconds: number;
}
