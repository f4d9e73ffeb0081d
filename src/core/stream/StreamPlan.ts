import type { AssembledBatch } from '../fetch/AssembledBatch.js';
import type { FetchOptions } from '../fetch/FetchOptions.js';
import type { ResolvedCheckpoint } from '../resume/jobCheckpoint.js';
import type { ResumeState } from '../resume/resumeToken.js';

/**
 * Everything a stream needs besides its database routes, metrics and cancellation: what
 * {@link planStream} makes of a request. Whatever a later feature adds to a stream (a cache,
 * several sources) belongs here, so the gRPC handler only runs the plan and writes.
 */
export interface StreamPlan {
  /**
   * What the stream reads, in the request's order: one source (its dataset and split), or a
   * mixture's; with the samples of each split and the positions each fills per epoch.
   */
  sources: PlannedSource[];
  /** Positions of every epoch, before sharding: the split's size, or the mixed epoch's. */
  positions: number;
  /** The stream mixes sources: its batches say each sample's source. */
  mixed: boolean;
  /** `jobFingerprint` of the request and split: what the stream's tokens are bound to. */
  job: Buffer;
  /** The split's content hash (or the mixture's): what the job's samples are fixed by. */
  contentHash: string;
  /**
   * The digest of the job checkpoint `epoch` was re-sharded from, or 16 zero bytes for an
   * ordinary epoch: what the epoch's tokens (and ledger rows) carry.
   */
  segmentOf(epoch: number): Buffer;
  /** The request's job checkpoint, validated (absent: none). */
  checkpoint?: ResolvedCheckpoint;
  /**
   * The positions of the checkpoint's epoch its world left undelivered, which that epoch's
   * shard is taken from (absent: no epoch is re-sharded).
   */
  remainder?: Uint32Array;
  /** Where the stream starts (absent: the start of first_epoch). */
  resume?: ResumeState;
  /** The shape of each transformed sample when the transform sends raw pixels. */
  tensor?: [number, number, number];
  /**
   * The fetch engine's options, less the process's routes and metrics and the call's signal;
   * `groupReads` always set (1: single-row reads).
   */
  fetch: Omit<FetchOptions, 'paths' | 'metrics' | 'signal' | 'groupReads'> & { groupReads: number };
  /**
   * Passes the fetch engine's batches through while having each next epoch's order made off
   * the event loop (from the epoch's first batch on), and waits for it after the epoch's last
   * batch: the engine asks for it synchronously as soon as it is asked for the next batch
   * (`fetch.shardOf`). Rejects with the call's signal's reason (see `planStream`) once it fires.
   */
  readyAhead(batches: AsyncIterable<AssembledBatch>): AsyncGenerator<AssembledBatch>;
  /** The resume token of a batch that leaves the stream at `state`. */
  resumeToken(state: ResumeState): Buffer;
}

/** One source of a planned stream. */
export interface PlannedSource {
  dataset: string;
  split: string;
  /** Samples in the split. */
  count: number;
  /** Positions the source fills per epoch (its split's size for a single source). */
  quota: number;
}
