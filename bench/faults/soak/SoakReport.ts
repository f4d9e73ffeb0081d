/** One sample of a soak, taken every few seconds. @internal */
export interface SoakSample {
  /** Seconds since the streams started. */
  at: number;
  rssBytes: number;
  fds: number;
  processes: number;
  /** Samples delivered to the clients so far. */
  delivered: number;
}

/** Figures of one `runSoakBench`. @internal */
export interface SoakReport {
  streams: number;
  seconds: number;
  /** Seconds of warm-up excluded from growth figures. */
  warmupSeconds: number;
  samplesDelivered: number;
  samplesPerSecond: number;
  /** Streams that ended with an error (each is retried by the SDK; counted, not hidden). */
  streamErrors: number;
  /** RSS of all loader processes just after warm-up, at the end, and the growth between. */
  rssAfterWarmupBytes: number;
  rssEndBytes: number;
  rssGrowthPercent: number;
  rssPeakBytes: number;
  /** Open file descriptors of all loader processes after warm-up and at the end. */
  fdsAfterWarmup: number;
  fdsEnd: number;
  fdsMax: number;
  /**
   * Event-loop delay of the loader from its /metrics (prom-client, between scrapes): the
   * largest p99 seen (the mean of the workers' p99s) and the largest max.
   */
  eventLoopP99Seconds: number;
  eventLoopMaxSeconds: number;
  processes: number;
  /** Scrapes of /metrics that failed (a worker too busy to answer the primary in time). */
  failedScrapes: number;
  crash: string | undefined;
  samples: SoakSample[];
}
