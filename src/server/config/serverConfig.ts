import { z } from 'zod';
import {
  dbConfigSchemaNaming,
  DEFAULT_LEDGER_KEYSPACE,
  DEFAULT_LEDGER_TTL_DAYS,
  dbPathSchema,
  ingestCapsSchema,
  parseReplication,
  streamLimitsSchema,
  transformLimitsSchema,
} from '../../core/index.js';
import { SERVE_SETTING_NAMES } from './serveSettingNames.js';

/**
 * Everything `serve` can be configured with. Defaults suit a loader reaching its database over
 * a high-latency link: many connections and many reads in flight per stream, so that a round
 * trip of 150 ms is hidden behind the reads of other samples.
 */
export const serverConfigSchema = z.object({
  ...streamLimitsSchema.shape,
  ...transformLimitsSchema.shape,
  /** Caps on what IngestSamples calls may add to a dataset's schema and info row. */
  ...ingestCapsSchema.shape,
  // A refused database setting is named as `serve` declares it.
  db: dbConfigSchemaNaming(SERVE_SETTING_NAMES),
  /** Extra routes to the database; reads are spread over all routes by observed latency. */
  extraPaths: z.array(dbPathSchema).default([]),
  host: z.string().min(1).default('0.0.0.0'),
  /** gRPC port; 0 picks a free one (tests). */
  port: z.number().int().min(0).max(65535).default(50051),
  /** Prometheus `/metrics` port; 0 picks a free one. */
  metricsPort: z.number().int().min(0).max(65535).default(9464),
  /**
   * Address of the `/metrics` and `/healthz` port; unset: the same as `host`. A sidecar binds
   * gRPC to 127.0.0.1 (only its pod's trainer) and metrics to 0.0.0.0 (Prometheus scrapes it).
   */
  metricsHost: z.string().min(1).optional(),
  /**
   * With workers: how long a `/metrics` scrape waits for each worker's figures; one that is
   * later is summed with its last figures and counted in `scylla_loader_metrics_workers_missing`.
   */
  metricsWorkerTimeoutMs: z.number().int().min(100).max(60_000).default(2_000),
  /**
   * Loader processes sharing the gRPC port (`serve --workers`); 0: one per CPU the process
   * may use (cgroup quota included). 1 is a single process, as before workers existed.
   */
  workers: z.number().int().min(0).max(256).default(0),
  /**
   * Concurrent StreamBatches and IngestSamples calls (per worker) before new ones get
   * RESOURCE_EXHAUSTED: each holds memory (a fetch window, or an ingest's pending requests).
   */
  maxConcurrentStreams: z.number().int().min(1).max(100_000).default(64),
  /**
   * Of those, how many one client may hold: a token's name when tokens are on, else the peer's
   * address. 0: three quarters of `maxConcurrentStreams` (rounded up), so one trainer can never
   * take every slot from the others.
   */
  maxStreamsPerClient: z.number().int().min(0).max(100_000).default(0),
  /**
   * Bytes the streams of one process may hold together (see `maxWindowBytes`): when reached,
   * each stream pauses its reads beyond one batch until sends bring the total down. Sized for
   * a worker of the Deployment (1,792 MiB of its 3,584 MiB limit) with room for the process
   * itself, its sample cache and the batches being sent.
   */
  maxHeldBytes: z
    .number()
    .int()
    .min(1 << 20)
    .max(2 ** 44)
    .default(1024 * 1024 * 1024),
  /**
   * Database queries the streams of one process may have in flight together. Each stream sizes
   * its own by its rate x round trip; this bounds their sum, within what the driver's
   * connections carry (`connectDbPaths` opens enough). A stream with fewer than 16 queries
   * going is admitted whatever the cap (so none stalls), so it may be passed by that much per
   * stream.
   */
  maxReadsInFlight: z.number().int().min(1).max(1_000_000).default(4096),
  /** Concurrent HTTP/2 streams (calls of any kind) one connection may open. */
  maxCallsPerConnection: z.number().int().min(1).max(100_000).default(128),
  /** Open connections one peer address may hold; more are closed as they arrive. */
  maxConnectionsPerPeer: z.number().int().min(1).max(100_000).default(256),
  /**
   * Serve without authorization on an address other than loopback: without tokens or mutual
   * TLS every RPC (IngestSamples, which creates keyspaces, and CreateSplits included) is open
   * to anyone who reaches the port, so `serve` refuses that unless this says it is meant.
   */
  allowUnauthenticated: z.boolean().default(false),
  /** Largest response message; a batch that would exceed it fails with RESOURCE_EXHAUSTED. */
  maxMessageBytes: z
    .number()
    .int()
    .min(1 << 20)
    .max(2 ** 31 - 1)
    .default(256 * 1024 * 1024),
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
  /**
   * TLS on the gRPC port: PEM certificate chain and key, and with `clientCaFile` mutual TLS
   * (clients must present a certificate that chains to it). Unset: plain-text HTTP/2.
   */
  tls: z
    .strictObject({
      certFile: z.string().min(1),
      keyFile: z.string().min(1),
      clientCaFile: z.string().min(1).optional(),
    })
    .optional(),
  /**
   * Replication of a dataset an IngestSamples call makes (`simple:<rf>` or
   * `nts:<dc>=<rf>,...`, as `ingest --replication`); an existing dataset keeps its own.
   */
  replication: z
    .string()
    .default('simple:1')
    .refine((text) => isReplication(text), {
      error: 'use simple:<rf> (e.g. simple:1) or nts:<dc>=<rf>[,<dc>=<rf>...] (e.g. nts:dc1=3)',
    }),
  /** Keyspace of the training ledger (made with `replication` the first time a stream names a job). */
  ledgerKeyspace: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_]{0,47}$/, {
      error: 'a keyspace name: a letter, then letters, digits and _, at most 48 characters',
    })
    .default(DEFAULT_LEDGER_KEYSPACE),
  /** Days a ledger row is kept (0: until `ledger drop`). */
  ledgerTtlDays: z.number().int().min(0).max(3650).default(DEFAULT_LEDGER_TTL_DAYS),
  /** Path of the tokens file (hashes, roles, dataset grants); unset: no authorization. */
  authTokensFile: z.string().min(1).optional(),
  /** How often the TLS files and the tokens file are read again to pick up changes. */
  reloadIntervalMs: z.number().int().min(100).max(3_600_000).default(10_000),
  /**
   * Bytes of each process's memory tier of the sample cache (0: none). 0 when built in code;
   * `serve` sizes it from the memory the loader may use unless told (defaultCacheMemory.ts).
   */
  cacheMemoryBytes: z.number().int().min(0).default(0),
  /** Folder of the host's disk tier of the sample cache, shared by its processes (unset: none). */
  cacheDir: z.string().min(1).optional(),
  /** Bytes of the disk tier, all processes of the host together. */
  cacheDiskBytes: z
    .number()
    .int()
    .min(16 * 1024 * 1024)
    .default(10 * 1024 * 1024 * 1024),
  /** Largest split (ids) the process caches, in bytes of ids (16 per sample). */
  idCacheBytes: z
    .number()
    .int()
    .min(1 << 20)
    .default(512 * 1024 * 1024),
});

/** Validated server settings. */
export type ServerConfig = z.infer<typeof serverConfigSchema>;

function isReplication(text: string): boolean {
  try {
    parseReplication(text);
    return true;
  } catch {
    return false;
  }
}
