import type { LoaderCounters, LoaderGauges } from './loaderCounters.js';

/** The cache figures of one stream's `stream_end` log line. @internal */
export interface StreamEndFigures {
  samples?: number;
  /** Samples per read query the stream used (1: single-row reads). */
  groupReads?: number;
  cacheHits?: number;
  cacheMisses?: number;
  cacheSharedReads?: number;
  cacheHitRatio?: number;
}

/** One epoch streamed through a loader, and what the loader read for it. @internal */
export interface CacheEpoch {
  epoch: number;
  /** Samples received by all the epoch's streams together. */
  samples: number;
  bytes: number;
  /** From the first call to the last batch. */
  wallSeconds: number;
  samplesPerSecond: number;
  /** From the call to the first batch (the slowest stream's): set-up, once per stream. */
  firstBatchSeconds: number;
  /** Every stream got each sample of the split exactly once. */
  exactlyOnce: boolean;
  /** What the loader's counters grew by over this epoch (scraped right before and after). */
  reads: LoaderCounters;
  /** Cache hits over all look ups of the epoch (from the counters); undefined without a cache. */
  hitRatio: number | undefined;
  /** The cache's gauges right after the epoch. */
  gauges: LoaderGauges;
  /** The `stream_end` lines of the epoch's streams. */
  streamEnds: StreamEndFigures[];
}

/** Epochs 0 (cold) to 2 through one fresh loader, with or without a fresh cache. @internal */
export interface CacheLeg {
  cached: boolean;
  rttMs: number;
  epochs: CacheEpoch[];
}

/** Concurrent jobs of different seeds over one split, one loader with a fresh cache. @internal */
export interface CacheSweep {
  rttMs: number;
  jobs: number;
  /** Samples of the split (each job streams all of them once). */
  samples: number;
  epoch: CacheEpoch;
  /** Samples the loader read from the database (cache misses), per sample of the split. */
  dbSamplesPerSplitSample: number;
  /** Database read queries per sample of the split. */
  dbQueriesPerSplitSample: number;
  /** Each job's own rate, samples/s. */
  jobSamplesPerSecond: number[];
}

/** A split twice the cache's size: no memory tier, a disk tier bound to half the split. */
export interface CacheOversize {
  rttMs: number;
  dataset: string;
  samples: number;
  splitBytes: number;
  diskBoundBytes: number;
  epochs: CacheEpoch[];
  /** Over the warm epochs (1 and later). */
  warmHitRatio: number;
  warmSamplesPerSecond: number;
  /** Size of `<cache-dir>/samples/data.mdb` after each epoch, then after the loader stopped. */
  dataFileBytes: number[];
  /** Bytes the file takes on disk at the same moments (LMDB's file may be sparse). */
  dataFileAllocatedBytes: number[];
  /** The largest of {@link CacheOversize.dataFileBytes} over the bound. */
  dataFileOverBound: number;
}

/** A goal of the cache, its target and what this run measured. @internal */
export interface CacheGoal {
  goal: string;
  target: string;
  measured: string;
  /** The measured ratio the target applies to. */
  value: number;
  met: boolean;
}
