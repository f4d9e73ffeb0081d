import { z } from 'zod';

/**
 * The limits every stream is held to, validated once with the rest of the configuration. The
 * wire layer checks requests against them; the fetch engine sizes its window and retries by
 * them. Defaults suit a loader reaching its database over a high-latency link.
 */
export const streamLimitsSchema = z.object({
  /** Largest batch a request may ask for. */
  maxBatchSize: z.number().int().min(1).max(1_048_576).default(8192),
  /** Batches worth of samples requested ahead when a request says 0. */
  defaultPrefetch: z.number().int().min(1).max(1024).default(4),
  /** Largest prefetch a request may ask for. */
  maxPrefetch: z.number().int().min(1).max(1024).default(64),
  /**
   * Positions one stream may hold in its window (prefetch x batch size) at most, adaptive
   * growth included: what bounds a stream's memory and its resume token's bitmap.
   */
  maxWindowSamples: z
    .number()
    .int()
    .min(1)
    .max(1 << 22)
    .default(65_536),
  /**
   * Bytes one stream may hold in its window (samples arrived or being transformed, not yet
   * sent, plus its reads in flight at the mean sample size); reads beyond one batch wait while
   * they would pass it. 64 streams of the default fit in 4 GiB; the process's
   * `maxHeldBytes` bounds them together.
   */
  maxWindowBytes: z
    .number()
    .int()
    .min(1 << 20)
    .max(2 ** 40)
    .default(64 * 1024 * 1024),
  /**
   * Database queries in flight per stream at most (the window may hold more positions): the
   * ceiling of what the stream's rate x round trip sizes them to (see `InFlightTarget`).
   */
  maxInFlightPerStream: z.number().int().min(1).max(100_000).default(1024),
  /**
   * Reading small samples in groups, one multi-partition query per group of ids sharing their
   * replicas: `auto` when the dataset's mean sample (total bytes over samples, as its ingests
   * recorded) is at most `groupReadsMaxBytes`, `on` always, `off` never.
   */
  groupReads: z.enum(['auto', 'on', 'off']).default('auto'),
  /** Mean sample size, in bytes, at or below which `groupReads: auto` groups reads. */
  groupReadsMaxBytes: z
    .number()
    .int()
    .min(0)
    .max(1 << 30)
    .default(16_384),
  /** Samples per grouped query at most. */
  groupReadsSize: z.number().int().min(2).max(1024).default(32),
  /**
   * Positions of a mixed epoch at most: what bounds the sequence a mixed stream keeps (4 bytes
   * a position, plus 1 while it is made), as a split's size bounds its permutation.
   */
  maxMixedEpoch: z
    .number()
    .int()
    .min(1)
    .max(2 ** 32 - 1)
    .default(16_777_216),
  /** Attempts per sample read (the first included) before the stream ends with UNAVAILABLE. */
  readAttempts: z.number().int().min(1).max(100).default(6),
  /** First retry backoff; doubled per attempt, with jitter. */
  retryBaseMs: z.number().int().min(1).max(60_000).default(50),
});

/** Validated stream limits. */
export type StreamLimits = z.infer<typeof streamLimitsSchema>;
