import type { TransformOptions } from './TransformOptions.js';

/** How a split's N samples are divided among W ranks (proto `ShardRule`). */
export type ShardRuleName = 'uneven' | 'pad' | 'drop';
/** Order of an epoch's samples (proto `ShuffleMode`). */
export type ShuffleModeName = 'uniform' | 'none';
/** Whether batches follow the permutation exactly (proto `Ordering`). */
export type OrderingName = 'out-of-order' | 'in-order';
/** What the server does with a sample id that has no row (proto `MissingSamplePolicy`). */
export type MissingSamplePolicyName = 'fail' | 'skip';

/** One source of a mixed stream (proto `StreamSource`). */
export interface StreamSourceOptions {
  /** Dataset (keyspace) name. */
  dataset: string;
  /** Split to take samples from: `all`, `set/part` or `set@version/part`. */
  split: string;
  /**
   * Positive weight (default 1): the source's share of the mixed epoch, and of every window
   * of it, is its weight over the sum of the weights.
   */
  weight?: number;
  /**
   * May be read more than once in one mixed epoch, a fresh permutation each pass (default
   * false: a share larger than the source is INVALID_ARGUMENT). A smaller share is
   * sub-sampled, a new slice of the source's permutation each epoch.
   */
  repeat?: boolean;
}

/**
 * What {@link LoaderClient.streamBatches} asks for: the fields of the proto's
 * `StreamBatchesRequest` with TypeScript types. Omitted fields take the server's defaults.
 * A request names one `dataset` and `split`, or `sources` to mix.
 */
export interface StreamBatchesOptions {
  /** Dataset (keyspace) name (absent with `sources`). */
  dataset?: string;
  /** Split to stream: `all` (every sample), `set/part` or `set@version/part` (absent with `sources`). */
  split?: string;
  /**
   * Several datasets or splits mixed by weight in one stream, instead of `dataset` and
   * `split`: each batch's `sourceIndexes` says where each sample came from. Sharding, resume
   * tokens and job checkpoints work on the mixed epoch as on a split.
   */
  sources?: StreamSourceOptions[];
  /**
   * With `sources`: positions of a mixed epoch (default: until the source with the largest
   * weight per sample has delivered each of its samples once).
   */
  samplesPerEpoch?: number;
  /** Samples per batch, 1 to the server's limit (8,192 by default). */
  batchSize: number;
  /** Seed of the per-epoch permutation, an unsigned 64-bit integer (default 0). */
  seed?: bigint | number | string;
  /** First epoch to stream (default 0). */
  firstEpoch?: number;
  /** Number of epochs to stream (default 1). */
  epochs?: number;
  /** This trainer's rank, in [0, worldSize) (default 0). */
  rank?: number;
  /** Number of ranks (default 1). */
  worldSize?: number;
  /** How the split is divided among ranks (default `uneven`). */
  shardRule?: ShardRuleName;
  /** `uniform`: a uniformly random permutation per (seed, epoch) (default); `none`: stored order. */
  shuffle?: ShuffleModeName;
  /** Leave out each epoch's final partial batch (default false). */
  dropLast?: boolean;
  /**
   * `out-of-order` (default): a batch is emitted as soon as enough samples of the prefetch
   * window have arrived; `in-order`: batches follow the permutation exactly.
   */
  ordering?: OrderingName;
  /** Batches worth of samples the server requests ahead (default: the server's). */
  prefetch?: number;
  /** `fail` (default): end with DATA_LOSS; `skip`: leave the sample out and count it. */
  missingSamplePolicy?: MissingSamplePolicyName;
  /**
   * A `resumeToken` of a batch of an earlier stream with the same fields: the stream
   * continues right after that batch. The SDK does this by itself within one
   * `streamBatches` call; pass it to continue after the trainer process restarted.
   */
  resumeToken?: Uint8Array;
  /**
   * A job checkpoint ({@link mergeResumeTokens}) of the same job at any world size: the
   * stream continues its epoch as rank `rank` of `worldSize`, taking a share of exactly the
   * positions no old rank delivered, then later epochs in full. Keep passing it with this
   * rank's `resumeToken`s while that epoch lasts; the SDK does so on its reconnects.
   */
  jobCheckpoint?: Uint8Array;
  /** Server-side decoding and augmentation (default: every sample's bytes as stored). */
  transform?: TransformOptions;
  /**
   * Metadata columns each batch carries (`batch.columns`, by name): any typed column of the
   * dataset (`describeDataset().columns`) and `source_key`. In a mixture a source whose dataset
   * lacks a column gives nulls. Columns change nothing about the batches' samples: a resume
   * token works with other columns than the stream that made it.
   */
  columns?: string[];
  /**
   * The training job this stream belongs to, the same on every rank and reconnection (1 to
   * 128 letters, digits, `_`, `-`, `.`, `:` and `/`): the loader records each batch in the
   * job's ledger before sending it (see {@link LoaderClient.getLedger}).
   */
  jobId?: string;
  /**
   * With `jobId` and `resumeToken`: recorded batches to leave out, `first` the batch right
   * after the token's (e.g. the batches after a checkpoint that led to a loss spike). The
   * epoch goes on without exactly their samples; its next batch is `last + 1`.
   */
  skipBatches?: { first: number; last: number };
  /**
   * With `jobId`: stream a recorded range of the job again (same batches, ids, order, indexes
   * and tokens; same pixels with the job's transform). The other options must repeat the
   * job's; nothing is recorded.
   */
  replay?: { epoch: number; rank: number; first: number; last?: number; worldSize?: number };
}
