import type { MixSource } from '../mixing/MixSource.js';
import type { JobCheckpoint } from '../resume/jobCheckpoint.js';
import type { ShardRule } from '../sampling/shard.js';
import type { TransformSpec } from '../transform/TransformSpec.js';

/**
 * A StreamBatches request with defaults applied and every field checked: what
 * {@link planStream} plans from. The gRPC layer makes it from the wire message
 * (`validateStreamRequest`); the core never sees the message itself.
 */
export interface StreamRequest {
  /** The single source's dataset; empty with `mix`. */
  dataset: string;
  /** The single source's split; empty with `mix`. */
  split: string;
  /**
   * Several sources mixed by weight instead of `dataset` and `split` (see `planMixture`);
   * `samplesPerEpoch` 0 sizes the epoch by the source with the largest weight per sample.
   */
  mix?: { sources: MixSource[]; samplesPerEpoch: number };
  batchSize: number;
  seed: bigint;
  firstEpoch: number;
  epochs: number;
  rank: number;
  worldSize: number;
  shardRule: ShardRule;
  shuffle: 'uniform' | 'none';
  dropLast: boolean;
  ordering: 'out-of-order' | 'in-order';
  prefetch: number;
  /**
   * The request left prefetch to the server (0): the window starts at the default and may
   * grow while the stream starves for reads (see BatchFetcher's adaptive window).
   */
  adaptivePrefetch: boolean;
  missing: 'fail' | 'skip';
  resumeToken: Buffer;
  /** Continue a job's epoch at this rank and world size (see proto's job_checkpoint). */
  jobCheckpoint?: JobCheckpoint;
  /** Server-side decoding and augmentation; absent: bytes as stored. */
  transform?: TransformSpec;
  /**
   * Metadata columns each batch carries, in this order (see `planColumns`); empty: none.
   * They change nothing about the batches' samples, so neither the job fingerprint nor the
   * resume tokens cover them.
   */
  columns?: string[];
  /**
   * The training job the stream belongs to (see `validateJobId`): with a ledger, every batch
   * is recorded under it before it is handed out. Absent: nothing is recorded.
   */
  jobId?: string;
  /**
   * With `jobId` and a resume token: recorded batches of the token's rank and epoch to leave
   * out, `first` the batch right after the token's (see `openLedgerStream`).
   */
  skipBatches?: { first: number; last: number };
  /**
   * With `jobId`: a recorded range to stream again instead of the request's epochs (see
   * `planReplay`); `worldSize` 0 when the rank has rows of one world only.
   */
  replay?: { epoch: number; rank: number; worldSize: number; first: number; last: number };
}
