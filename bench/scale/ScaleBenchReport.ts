/** One stream of one split size, through a fresh loader. */
export interface ScaleRun {
  /** The split's cap (10^4, ...). */
  size: number;
  split: string;
  run: number;
  seed: number;
  /** Samples the part holds, and what the trainer and the loader counted. */
  splitSamples: number;
  samples: number;
  loaderSamples?: number;
  batches: number;
  bytes: number;
  wallSeconds: number;
  samplesPerSecond: number;
  /** Time to the first batch as the trainer saw it (includes loading the split's ids), ms. */
  firstBatchMs: number;
  /** Loader CPU seconds over the stream, and per batch (ms). */
  loaderCpuSeconds?: number;
  loaderCpuMsPerBatch?: number;
  clientCpuSeconds: number;
  /** CPU seconds of the local database node over the stream (absent for another cluster). */
  dbCpuSeconds?: number;
  /** Loader resident set size after the warm-up, before the stream (bytes). */
  loaderRssBeforeBytes?: number;
  /**
   * Loader peak resident set size during the stream (`VmHWM` reset before it), bytes. It
   * includes garbage the JS heap has not collected yet, which grows with the stream's length
   * until the heap's size settles, not only what the loader holds for the split.
   */
  loaderPeakRssBytes?: number;
  /** Loader resident set size after the stream (bytes). */
  loaderRssAfterBytes?: number;
}
