import { z } from 'zod';
import { dbConfigSchema } from './dbConfig.js';

/** An extra route to the database: its own driver client with its own contact points. */
export const dbPathSchema = z.object({
  name: z.string().regex(/^[a-z0-9_-]{1,32}$/),
  contactPoints: z.array(z.string().min(1)).min(1),
  port: z.number().int().min(1).max(65535).default(9042),
});

/**
 * Everything `serve` can be configured with. Defaults suit a loader reaching its database over
 * a high-latency link: many connections and many reads in flight per stream, so that a round
 * trip of 150 ms is hidden behind the reads of other samples.
 */
export const serverConfigSchema = z.object({
  db: dbConfigSchema,
  /** Extra routes to the database; reads are spread over all routes by observed latency. */
  extraPaths: z.array(dbPathSchema).default([]),
  host: z.string().min(1).default('0.0.0.0'),
  /** gRPC port; 0 picks a free one (tests). */
  port: z.number().int().min(0).max(65535).default(50051),
  /** Prometheus `/metrics` port; 0 picks a free one. */
  metricsPort: z.number().int().min(0).max(65535).default(9464),
  /** Concurrent StreamBatches calls before new ones get RESOURCE_EXHAUSTED. */
  maxConcurrentStreams: z.number().int().min(1).max(100_000).default(64),
  /** Largest batch a request may ask for. */
  maxBatchSize: z.number().int().min(1).max(1_048_576).default(8192),
  /** Largest response message; a batch that would exceed it fails with RESOURCE_EXHAUSTED. */
  maxMessageBytes: z
    .number()
    .int()
    .min(1 << 20)
    .max(2 ** 31 - 1)
    .default(256 * 1024 * 1024),
  /** Batches worth of samples requested ahead when a request says 0. */
  defaultPrefetch: z.number().int().min(1).max(1024).default(4),
  /** Largest prefetch a request may ask for. */
  maxPrefetch: z.number().int().min(1).max(1024).default(64),
  /** Sample reads in flight per stream at most (the window may hold more positions). */
  maxInFlightPerStream: z.number().int().min(1).max(100_000).default(256),
  /** Attempts per sample read (the first included) before the stream ends with UNAVAILABLE. */
  readAttempts: z.number().int().min(1).max(100).default(6),
  /** First retry backoff; doubled per attempt, with jitter. */
  retryBaseMs: z.number().int().min(1).max(60_000).default(50),
  /**
   * Key (at least 32 bytes, hex or base64) that authenticates resume tokens; must be the same
   * on every replica so a stream can resume on any of them.
   */
  resumeKey: z.string().min(1).optional(),
  /** How long streams may run on after SIGTERM before they end with UNAVAILABLE. */
  shutdownGraceMs: z.number().int().min(0).max(3_600_000).default(15_000),
  /** HTTP/2 keepalive ping interval and timeout. */
  keepaliveTimeMs: z.number().int().min(1000).default(30_000),
  keepaliveTimeoutMs: z.number().int().min(1000).default(10_000),
  /** Largest split (ids) the process caches, in bytes of ids (16 per sample). */
  idCacheBytes: z
    .number()
    .int()
    .min(1 << 20)
    .default(512 * 1024 * 1024),
});

/** Validated server settings. */
export type ServerConfig = z.infer<typeof serverConfigSchema>;
