/** Figures of one `runConsumersBench`. @internal */
export interface ConsumersReport {
  stuckStreams: number;
  slowStreams: number;
  /** Samples per batch, prefetch and sample bytes of the stuck and slow streams. */
  batchSize: number;
  prefetch: number;
  sampleBytes: number;
  /**
   * The documented most a stream holds: its window (prefetch x batch size samples) plus the
   * batch being written, in bytes.
   */
  windowBytesPerStream: number;
  /** RSS of all loader processes with one normal stream only, and at its peak with all held. */
  rssBaselineBytes: number;
  rssPeakHeldBytes: number;
  /** V8 heap used (all workers, from /metrics) likewise. */
  heapBaselineBytes: number;
  heapPeakHeldBytes: number;
  /** Memory outside the V8 heap (Buffers: samples, encoded batches), likewise. */
  externalBaselineBytes: number;
  externalPeakHeldBytes: number;
  /** Samples/s of one normal stream alone, and while the stuck and slow ones are held. */
  normalRateAlone: number;
  normalRateWithHeld: number;
  /** Batches per second the slow consumers received, each (they ask for one a second). */
  slowBatchesPerSecond: number;
  /** Stuck (alive, not reading) streams still open at the end: keepalive must spare them. */
  stuckStillOpen: number;
  /** Keepalive settings the loader ran with. */
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  /** Ms from freezing a dead peer's connection until the loader closed it; -1: it never did. */
  deadClosedAfterMs: number;
  /** Active streams by the loader's gauge: with everything held, after the dead one went. */
  activeStreamsHeld: number;
  activeStreamsAfterDead: number;
  crash: string | undefined;
  seconds: number;
}
