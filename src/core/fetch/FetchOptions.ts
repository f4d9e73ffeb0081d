import type { SampleCache } from '../cache/SampleCache.js';
import type { DbPath } from '../db/DbPath.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import type { ResumeState } from '../resume/resumeToken.js';
import type { EpochShard } from '../sampling/epochShard.js';
import type { StreamTransformer } from '../transform/StreamTransformer.js';
import type { ByteBudget } from './ByteBudget.js';
import type { ReadSlots } from './ReadSlots.js';
import type { FetchSource } from './SourceCatalog.js';

/** What the engine needs to fetch a rank's epochs. */
export interface FetchOptions {
  /**
   * What the stream reads: one source (a dataset's split), or a mixture's sources. Stored
   * positions (`shardOf`'s) index the sources laid end to end (see `SourceCatalog`).
   */
  sources: readonly FetchSource[];
  firstEpoch: number;
  /** One past the last epoch to stream. */
  endEpoch: number;
  /** The rank's positions in an epoch. */
  shardOf: (epoch: number) => EpochShard;
  batchSize: number;
  /** Batches worth of positions held in flight or waiting to be sent. */
  prefetch: number;
  /**
   * Positions the window may grow to while the stream starves (absent: fixed at prefetch x
   * batch size). See `adaptiveWindowMax`.
   */
  adaptiveWindowMax?: number;
  ordering: 'out-of-order' | 'in-order';
  missing: 'fail' | 'skip';
  /**
   * Reads in flight at most, first reads and retries waiting out their backoff together: a
   * ceiling when `inFlightFloor` is set, else a fixed allowance.
   */
  maxInFlight: number;
  /**
   * Size the reads in flight by the stream's measured rate x round trip (Little's law, see
   * `InFlightTarget`) from this floor up to `maxInFlight` (absent: `maxInFlight` is fixed).
   */
  inFlightFloor?: number;
  /** The process's cap on queries in flight, shared with its other streams (absent: none). */
  readSlots?: ReadSlots;
  /**
   * Bytes of samples the stream may hold (arrived or being transformed, not yet sent) plus the
   * expected bytes of its reads in flight (at its mean sample size): reads beyond one batch
   * wait while they would pass it. A window bounded in samples alone let a stream of 1 MiB
   * samples pin 64 GiB. Absent: bounded in positions only.
   */
  maxWindowBytes?: number;
  /**
   * Mean bytes of a sample of the stream's datasets, as ingest recorded them (absent: unknown
   * until the stream's first sample arrives, and then its own mean is used).
   */
  meanSampleBytes?: number;
  /** The process's budget of held bytes, shared with its other streams (absent: none). */
  budget?: ByteBudget;
  /** Attempts per read before the stream fails with UNAVAILABLE. */
  readAttempts: number;
  /** Backoff before the first retry, doubled for each further one (with jitter). */
  retryBaseMs: number;
  /**
   * Samples read together at most, with one multi-partition query per group of ids sharing
   * their replicas (absent or 1: one single-row read per sample). Pays off for small samples,
   * whose reads cost more in per-request work than in bytes; see `groupReadSize`.
   */
  groupReads?: number;
  resume?: ResumeState;
  /**
   * Transforms every sample after its read, before it can join a batch; a sample being
   * transformed holds its place in the window. Undecodable samples follow `transform.spec`'s
   * bad-image policy.
   */
  transform?: StreamTransformer;
  /**
   * The stream mixes sources: a transform draws from the sample's position in the mixed epoch
   * too, so a sample repeated within an epoch is augmented anew each time.
   */
  mixed?: boolean;
  /**
   * The process's sample cache and each source's dataset identity in it, by source (absent:
   * every sample is read from the database).
   */
  cache?: { store: SampleCache; scopes: readonly Buffer[] };
  paths: readonly DbPath[];
  metrics: LoaderMetrics;
  signal: AbortSignal;
}
