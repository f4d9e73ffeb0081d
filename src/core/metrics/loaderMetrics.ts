import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type SettingNames, settingName } from '../config/settingNames.js';

/**
 * The metrics of the core's work (reads, sends, transforms, the sample cache, ingests), on one
 * registry (one per server, so tests stay isolated). Metrics of RPC calls themselves (open
 * streams, refused calls, the tokens file) are the server's, added to the same registry.
 */
export interface LoaderMetrics {
  registry: Registry;
  samplesSent: Counter;
  /** Samples sent, by the dataset and split they came from (a mixture's by source). */
  sourceSamplesSent: Counter<'dataset' | 'split'>;
  bytesSent: Counter;
  batchesSent: Counter;
  /** Database read latency per sample, by path. */
  dbReadSeconds: Histogram<'path'>;
  /** Time from a batch's first sample arriving to the batch being handed to gRPC. */
  batchAssemblySeconds: Histogram;
  /** Time a job's batch took to be recorded in the training ledger (its row and index rows). */
  ledgerWriteSeconds: Histogram;
  /** Batches a job's stream could not record (the stream then ended UNAVAILABLE or failed). */
  ledgerWriteFailures: Counter;
  dbRequestsInFlight: Gauge;
  /** Bytes the process's streams hold (see `ByteBudget`). */
  heldBytes: Gauge;
  /** Streams by what last stopped their reads (see `ReadBound`). */
  streamReadBound: Gauge<'bound'>;
  /** The streams' targets of reads in flight, summed. */
  readsInFlightTarget: Gauge;
  /** Mean over streams of the lowest round trip each measured lately. */
  readRoundTripMinSeconds: Gauge;
  dbRetries: Counter<'path'>;
  /** Second reads of stuck samples, by the route they went to. */
  dbHedgedReads: Counter<'path'>;
  missingSamples: Counter;
  /**
   * Time one sample's transform ran on the thread pool (its slot wait excluded), by output and
   * by the decoder that served it (`native`, `sharp`; `none` for an undecodable sample).
   */
  transformSeconds: Histogram<'output' | 'decoder' | 'thread'>;
  /** Samples that could not be decoded, by reason (skipped or ending their stream). */
  transformFailures: Counter<'reason'>;
  /** Pixels of the transforms' output images. */
  transformPixels: Counter;
  /** Transforms waiting for a slot of the process's pool. */
  transformsWaiting: Gauge;
  /** Samples the sample cache had, by tier (`memory`, `disk`). */
  cacheHits: Counter<'tier'>;
  /** Samples the cache did not have, which a stream read from the database itself. */
  cacheMisses: Counter;
  /** Samples the cache did not have, which a stream took from another stream's read. */
  cacheSharedReads: Counter;
  /**
   * Samples IngestSamples handled, by outcome, as each happens: `written`, `present` (already
   * stored, left as it was), `skipped` (against the rules, under the skip policy).
   */
  ingestSamples: Counter<'outcome'>;
  /** Sample and label bytes IngestSamples wrote. */
  ingestBytes: Counter;
  /**
   * Recounts of a dataset (a full scan of its metadata table) after IngestSamples calls: calls
   * of a dataset ending together share one, and a call that wrote nothing has none.
   */
  datasetRecounts: Counter;
  /** Bytes the memory tier holds (each process's, summed over the workers). */
  cacheMemoryBytes: Gauge;
  /** Bytes the disk tier is counted as holding (one store per host, shared by the workers). */
  cacheDiskBytes: Gauge;
  /** Entries pushed out of a tier by its bound. */
  cacheEvictions: Counter<'tier'>;
  /** Disk entries whose checksum did not match: dropped and read again from the database. */
  cacheDamaged: Counter;
  /** Disk tier failures (a full or failing disk), each turning a process's disk tier off. */
  cacheDiskErrors: Counter;
  /** 1 while the disk tier is on (in every worker), 0 when off or not configured. */
  cacheDiskEnabled: Gauge;
  /** Disk tier writes dropped because the disk did not keep up (the samples stay uncached). */
  cacheWritesDropped: Counter;
}

/** Optional parts of {@link createLoaderMetrics}. */
export interface LoaderMetricsOptions {
  /** The registry to add them to (default: a fresh one, with the process metrics). */
  registry?: Registry;
  /** How help texts name the settings they mention (default: their fields). */
  settingNames?: SettingNames;
}

/** Creates the core's metrics, on `registry` or a fresh one with the process metrics. */
export function createLoaderMetrics(options: LoaderMetricsOptions = {}): LoaderMetrics {
  const registry = options.registry ?? new Registry();
  if (!options.registry) collectDefaultMetrics({ register: registry });
  const latencyBuckets = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10,
  ];
  return {
    registry,
    samplesSent: new Counter({
      name: 'scylla_loader_samples_sent_total',
      help: 'Samples sent to clients.',
      registers: [registry],
    }),
    sourceSamplesSent: new Counter({
      name: 'scylla_loader_source_samples_sent_total',
      help:
        'Samples sent to clients, by the dataset and split they came from (each source of a ' +
        'mixed stream apart).',
      labelNames: ['dataset', 'split'],
      registers: [registry],
    }),
    bytesSent: new Counter({
      name: 'scylla_loader_sent_bytes_total',
      help: 'Sample and label bytes sent to clients.',
      registers: [registry],
    }),
    batchesSent: new Counter({
      name: 'scylla_loader_batches_sent_total',
      help: 'Batches sent to clients.',
      registers: [registry],
    }),
    dbReadSeconds: new Histogram({
      name: 'scylla_loader_db_read_duration_seconds',
      help: 'Latency of one database read (one sample, or one group of small samples), retries excluded.',
      labelNames: ['path'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    batchAssemblySeconds: new Histogram({
      name: 'scylla_loader_batch_assembly_duration_seconds',
      help: "Time from a batch's first sample arriving to the batch being written to the stream.",
      buckets: latencyBuckets,
      registers: [registry],
    }),
    ledgerWriteSeconds: new Histogram({
      name: 'scylla_loader_ledger_write_duration_seconds',
      help: "Time a job's batch took to be recorded in the training ledger (its row and its samples' index rows).",
      buckets: latencyBuckets,
      registers: [registry],
    }),
    ledgerWriteFailures: new Counter({
      name: 'scylla_loader_ledger_write_failures_total',
      help: "Batches of jobs' streams that could not be recorded in the training ledger (not sent).",
      registers: [registry],
    }),
    dbRequestsInFlight: new Gauge({
      name: 'scylla_loader_db_requests_in_flight',
      help: 'Sample reads currently in flight to the database.',
      registers: [registry],
    }),
    streamReadBound: new Gauge({
      name: 'scylla_loader_stream_read_bound',
      help:
        'Streams by what stopped their reads last: target (reads in flight at rate x round ' +
        'trip x 2: latency hidden, the rate bound elsewhere), ceiling or process (a limit on ' +
        'reads in flight: latency-bound), window (reads fill the window), trainer (samples ' +
        'waiting to be sent fill it: the trainer takes no faster), span (a straggler), bytes ' +
        '(a byte bound), ramp (a stream starting), done (all reads issued).',
      labelNames: ['bound'],
      registers: [registry],
    }),
    readsInFlightTarget: new Gauge({
      name: 'scylla_loader_reads_in_flight_target',
      help:
        "Reads in flight the streams' measured rate x round trip call for (with headroom), " +
        'summed over streams; compare with scylla_loader_db_requests_in_flight.',
      registers: [registry],
    }),
    readRoundTripMinSeconds: new Gauge({
      name: 'scylla_loader_read_round_trip_min_seconds',
      help:
        'Lowest read round trip each stream measured lately (the route, without queueing), ' +
        'averaged over streams (with workers: the highest of the workers, an idle one shows ' +
        '0): what reads in flight are sized by.',
      // Summed over the workers of `serve --workers N` it would be N times too long, and
      // averaged, idle workers' 0 would pull it down.
      aggregator: 'max',
      registers: [registry],
    }),
    heldBytes: new Gauge({
      name: 'scylla_loader_held_bytes',
      help:
        'Bytes of samples the streams hold (arrived or being transformed, not yet sent), ' +
        `against ${settingName(options.settingNames, 'maxHeldBytes')}.`,
      registers: [registry],
    }),
    dbRetries: new Counter({
      name: 'scylla_loader_db_retries_total',
      help: 'Sample reads retried after a timeout or a retryable error.',
      labelNames: ['path'],
      registers: [registry],
    }),
    dbHedgedReads: new Counter({
      name: 'scylla_loader_db_hedged_reads_total',
      help: 'Second reads of samples whose first read was far slower than usual.',
      labelNames: ['path'],
      registers: [registry],
    }),
    missingSamples: new Counter({
      name: 'scylla_loader_missing_samples_total',
      help: 'Sample ids without a row, skipped at the request of the client.',
      registers: [registry],
    }),
    transformSeconds: new Histogram({
      name: 'scylla_loader_transform_duration_seconds',
      help:
        "Time one sample's server-side transform (decode, resize, crop, output) ran, by output " +
        'format, by decoder (native: the native module; sharp: libvips; none: undecodable) and ' +
        "by thread (loop: a small plan on the event loop; pool: libuv's thread pool).",
      labelNames: ['output', 'decoder', 'thread'],
      buckets: latencyBuckets,
      registers: [registry],
    }),
    transformFailures: new Counter({
      name: 'scylla_loader_transform_failures_total',
      help: 'Samples that could not be decoded, by reason (empty, unsupported_format, pixel_limit, too_many_scans, truncated, corrupt).',
      labelNames: ['reason'],
      registers: [registry],
    }),
    transformPixels: new Counter({
      name: 'scylla_loader_transform_pixels_total',
      help: 'Pixels produced by server-side transforms (output width x height).',
      registers: [registry],
    }),
    cacheHits: new Counter({
      name: 'scylla_loader_cache_hits_total',
      help: 'Samples the sample cache had, by tier.',
      labelNames: ['tier'],
      registers: [registry],
    }),
    cacheMisses: new Counter({
      name: 'scylla_loader_cache_misses_total',
      help: 'Samples the sample cache did not have, read from the database.',
      registers: [registry],
    }),
    cacheSharedReads: new Counter({
      name: 'scylla_loader_cache_shared_reads_total',
      help: "Samples the cache did not have, taken from another stream's database read in flight.",
      registers: [registry],
    }),
    ingestSamples: new Counter({
      name: 'scylla_loader_ingest_samples_total',
      help:
        'Samples IngestSamples handled, by outcome: written, present (already stored, left as ' +
        'it was), skipped (against the rules, under the skip policy).',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    ingestBytes: new Counter({
      name: 'scylla_loader_ingest_bytes_total',
      help: 'Sample and label bytes IngestSamples wrote (samples already present not counted).',
      registers: [registry],
    }),
    datasetRecounts: new Counter({
      name: 'scylla_loader_dataset_recounts_total',
      help:
        'Recounts of a dataset (a full scan of its metadata table) after IngestSamples calls; ' +
        'calls ending together share one, a call that wrote nothing has none.',
      registers: [registry],
    }),
    cacheMemoryBytes: new Gauge({
      name: 'scylla_loader_cache_memory_bytes',
      help: 'Bytes the memory tier of the sample cache holds.',
      registers: [registry],
    }),
    cacheDiskBytes: new Gauge({
      name: 'scylla_loader_cache_disk_bytes',
      help: "Bytes the host's disk tier of the sample cache is counted as holding.",
      // One store shared by the workers: each reports the same figure.
      aggregator: 'max',
      registers: [registry],
    }),
    cacheEvictions: new Counter({
      name: 'scylla_loader_cache_evictions_total',
      help: 'Entries pushed out of a tier of the sample cache by its bound.',
      labelNames: ['tier'],
      registers: [registry],
    }),
    cacheDamaged: new Counter({
      name: 'scylla_loader_cache_damaged_entries_total',
      help: 'Disk cache entries whose checksum did not match, dropped and read from the database.',
      registers: [registry],
    }),
    cacheDiskErrors: new Counter({
      name: 'scylla_loader_cache_disk_errors_total',
      help: 'Disk tier failures, each turning the disk tier of a process off.',
      registers: [registry],
    }),
    cacheDiskEnabled: new Gauge({
      name: 'scylla_loader_cache_disk_enabled',
      help: 'Whether the disk tier of the sample cache is on (in every worker).',
      aggregator: 'min',
      registers: [registry],
    }),
    cacheWritesDropped: new Counter({
      name: 'scylla_loader_cache_disk_writes_dropped_total',
      help: 'Disk tier writes dropped because the disk did not keep up; those samples stay uncached.',
      registers: [registry],
    }),
    transformsWaiting: new Gauge({
      name: 'scylla_loader_transforms_waiting',
      help: "Transforms waiting for a slot of the process's transform pool.",
      registers: [registry],
    }),
  };
}
