import type { CoreSetting, SettingNames } from '../../core/index.js';
import { DB_POOL_SETTINGS, DB_SETTINGS, dbSettingNames } from '../dbOptions.js';
import { INGEST_CAP_SETTINGS } from './ingestCapSettings.js';
import { type Setting, settingName } from './Setting.js';

/**
 * Every setting of `serve`, declared once: its flag, variable, unit and help. Defaults and
 * valid ranges come from `serverConfigSchema`. The options of `serve`, its error messages,
 * docs/configuration.md's table (`npm run docs:settings`) and the check of the Kubernetes
 * ConfigMap's keys are derived from this list.
 */
export const SERVE_SETTINGS: readonly Setting[] = [
  {
    field: 'host',
    flag: '--host <address>',
    env: 'SCYLLA_LOADER_HOST',
    type: 'text',
    help: 'address to listen on',
  },
  {
    field: 'port',
    flag: '--grpc-port <n>',
    env: 'SCYLLA_LOADER_GRPC_PORT',
    type: 'number',
    unit: 'port',
    help: 'gRPC port (0: a free one)',
  },
  {
    field: 'workers',
    flag: '--workers <n>',
    env: 'SCYLLA_LOADER_WORKERS',
    type: 'number',
    unit: 'processes',
    help: 'loader processes sharing the port, each a full loader (0: one per CPU of the quota)',
  },
  {
    field: 'metricsPort',
    flag: '--metrics-port <n>',
    env: 'SCYLLA_LOADER_METRICS_PORT',
    type: 'number',
    unit: 'port',
    help: '/metrics and /healthz port',
  },
  {
    field: 'metricsHost',
    flag: '--metrics-host <address>',
    env: 'SCYLLA_LOADER_METRICS_HOST',
    type: 'text',
    help:
      'address of the /metrics and /healthz port (a sidecar keeps gRPC on 127.0.0.1 and ' +
      'metrics on 0.0.0.0 for Prometheus)',
    defaultText: 'the same as --host',
  },
  {
    field: 'metricsWorkerTimeoutMs',
    flag: '--metrics-worker-timeout-ms <n>',
    env: 'SCYLLA_LOADER_METRICS_WORKER_TIMEOUT_MS',
    type: 'number',
    unit: 'ms',
    help:
      'with workers, how long a /metrics scrape waits for each worker; a later one is summed ' +
      'with its last figures and counted in scylla_loader_metrics_workers_missing',
  },
  {
    field: 'maxConcurrentStreams',
    flag: '--max-streams <n>',
    env: 'SCYLLA_LOADER_MAX_STREAMS',
    type: 'number',
    unit: 'streams',
    help: 'open streams (StreamBatches and IngestSamples calls) before new ones get RESOURCE_EXHAUSTED',
  },
  {
    field: 'maxStreamsPerClient',
    flag: '--max-streams-per-client <n>',
    env: 'SCYLLA_LOADER_MAX_STREAMS_PER_CLIENT',
    type: 'number',
    unit: 'streams',
    help:
      'open streams one client may hold (a token when tokens are on, else a peer address) before ' +
      'its next gets RESOURCE_EXHAUSTED; 0: three quarters of --max-streams',
  },
  {
    field: 'maxCallsPerConnection',
    flag: '--max-calls-per-connection <n>',
    env: 'SCYLLA_LOADER_MAX_CALLS_PER_CONNECTION',
    type: 'number',
    unit: 'calls',
    help: 'concurrent calls (HTTP/2 streams) one connection may open',
  },
  {
    field: 'maxConnectionsPerPeer',
    flag: '--max-connections-per-peer <n>',
    env: 'SCYLLA_LOADER_MAX_CONNECTIONS_PER_PEER',
    type: 'number',
    unit: 'connections',
    help: 'open connections one peer address may hold; more are closed as they arrive',
  },
  {
    field: 'allowUnauthenticated',
    flag: '--allow-unauthenticated',
    env: 'SCYLLA_LOADER_ALLOW_UNAUTHENTICATED',
    type: 'switch',
    help:
      'serve on an address other than loopback without --auth-tokens or mutual TLS: every RPC, ' +
      'ingest and split creation included, is then open to anyone who reaches the port',
  },
  {
    field: 'maxBatchSize',
    flag: '--max-batch-size <n>',
    env: 'SCYLLA_LOADER_MAX_BATCH_SIZE',
    type: 'number',
    unit: 'samples',
    help: 'largest batch a request may ask for',
  },
  {
    field: 'maxMessageBytes',
    flag: '--max-message-bytes <n>',
    env: 'SCYLLA_LOADER_MAX_MESSAGE_BYTES',
    type: 'number',
    unit: 'bytes',
    help: 'largest response message',
  },
  {
    field: 'defaultPrefetch',
    flag: '--default-prefetch <n>',
    env: 'SCYLLA_LOADER_DEFAULT_PREFETCH',
    type: 'number',
    unit: 'batches',
    help: 'batches requested ahead when a request says 0',
  },
  {
    field: 'maxPrefetch',
    flag: '--max-prefetch <n>',
    env: 'SCYLLA_LOADER_MAX_PREFETCH',
    type: 'number',
    unit: 'batches',
    help: 'largest prefetch a request may ask for',
  },
  {
    field: 'maxWindowSamples',
    flag: '--max-window-samples <n>',
    env: 'SCYLLA_LOADER_MAX_WINDOW_SAMPLES',
    type: 'number',
    unit: 'samples',
    help: 'positions one stream may hold in its window (prefetch x batch size, growth included)',
  },
  {
    field: 'maxWindowBytes',
    flag: '--max-window-bytes <n>',
    env: 'SCYLLA_LOADER_MAX_WINDOW_BYTES',
    type: 'number',
    unit: 'bytes',
    help:
      'bytes one stream may hold (samples arrived, being transformed or read, not yet sent); ' +
      'reads beyond one batch wait while they would pass it',
  },
  {
    field: 'maxHeldBytes',
    flag: '--max-held-bytes <n>',
    env: 'SCYLLA_LOADER_MAX_HELD_BYTES',
    type: 'number',
    unit: 'bytes',
    help:
      'bytes all streams of a process may hold together; when reached, streams pause their ' +
      'reads (not their sends) beyond one batch each until sends bring it down',
  },
  {
    field: 'maxInFlightPerStream',
    flag: '--max-in-flight <n>',
    env: 'SCYLLA_LOADER_MAX_IN_FLIGHT',
    type: 'number',
    unit: 'reads',
    help:
      'database queries in flight per stream at most: the ceiling of what its measured rate x ' +
      'round trip sizes them to',
  },
  {
    field: 'maxReadsInFlight',
    flag: '--max-reads-in-flight <n>',
    env: 'SCYLLA_LOADER_MAX_READS_IN_FLIGHT',
    type: 'number',
    unit: 'queries',
    help:
      'database queries all streams of a process may have in flight together (each stream ' +
      'sizes its own by rate x round trip, up to --max-in-flight)',
  },
  {
    field: 'readAttempts',
    flag: '--read-attempts <n>',
    env: 'SCYLLA_LOADER_READ_ATTEMPTS',
    type: 'number',
    unit: 'attempts',
    help: 'attempts per sample read before UNAVAILABLE',
  },
  {
    field: 'groupReadsMaxBytes',
    flag: '--group-reads-max-bytes <n>',
    env: 'SCYLLA_LOADER_GROUP_READS_MAX_BYTES',
    type: 'number',
    unit: 'bytes',
    help: 'with --group-reads auto: mean sample size (bytes, as ingested) at or below which reads are grouped',
  },
  {
    field: 'groupReadsSize',
    flag: '--group-reads-size <n>',
    env: 'SCYLLA_LOADER_GROUP_READS_SIZE',
    type: 'number',
    unit: 'samples',
    help: 'samples per grouped read query at most',
  },
  {
    field: 'maxMixedEpoch',
    flag: '--max-mixed-epoch <n>',
    env: 'SCYLLA_LOADER_MAX_MIXED_EPOCH',
    type: 'number',
    unit: 'positions',
    help: "positions of a mixed stream's epoch at most (its sequence takes 4 bytes a position)",
  },
  {
    field: 'retryBaseMs',
    flag: '--retry-base-ms <n>',
    env: 'SCYLLA_LOADER_RETRY_BASE_MS',
    type: 'number',
    unit: 'ms',
    help: 'first retry backoff (ms)',
  },
  {
    field: 'shutdownGraceMs',
    flag: '--grace-ms <n>',
    env: 'SCYLLA_LOADER_SHUTDOWN_GRACE_MS',
    type: 'number',
    unit: 'ms',
    help: 'after SIGTERM, how long streams may run on before UNAVAILABLE (ms)',
  },
  {
    field: 'keepaliveTimeMs',
    flag: '--keepalive-time-ms <n>',
    env: 'SCYLLA_LOADER_KEEPALIVE_TIME_MS',
    type: 'number',
    unit: 'ms',
    help: 'HTTP/2 ping interval (ms)',
  },
  {
    field: 'keepaliveTimeoutMs',
    flag: '--keepalive-timeout-ms <n>',
    env: 'SCYLLA_LOADER_KEEPALIVE_TIMEOUT_MS',
    type: 'number',
    unit: 'ms',
    help: 'HTTP/2 ping timeout (ms)',
  },
  {
    field: 'idCacheBytes',
    flag: '--id-cache-bytes <n>',
    env: 'SCYLLA_LOADER_ID_CACHE_BYTES',
    type: 'number',
    unit: 'bytes',
    help: 'bytes of split ids cached',
  },
  {
    field: 'cacheMemoryBytes',
    flag: '--cache-memory-bytes <n>',
    env: 'SCYLLA_LOADER_CACHE_MEMORY_BYTES',
    type: 'number',
    unit: 'bytes',
    help:
      'memory tier of the sample cache, per loader process: samples as the database returns ' +
      'them; once full, one read in ten is kept in place of a random entry (0: none). Unset: ' +
      'sized from the memory the loader may use, the container limit included (docs/cache.md)',
    defaultText: 'from memory',
  },
  {
    field: 'cacheDir',
    flag: '--cache-dir <path>',
    env: 'SCYLLA_LOADER_CACHE_DIR',
    type: 'text',
    help:
      "folder on local storage for the sample cache's disk tier, shared by every loader " +
      'process of the host (an LMDB store); serve stops at start when it cannot be opened. ' +
      'Only this: downloaded development tools go under $XDG_CACHE_HOME/scylla-loader',
    defaultText: 'none',
  },
  {
    field: 'cacheDiskBytes',
    flag: '--cache-disk-bytes <n>',
    env: 'SCYLLA_LOADER_CACHE_DISK_BYTES',
    type: 'number',
    unit: 'bytes',
    help:
      'bound of the disk tier, all processes of the host together (its file included); once ' +
      'full, one read in ten is kept in place of random entries',
  },
  {
    field: 'maxImagePixels',
    flag: '--max-image-pixels <n>',
    env: 'SCYLLA_LOADER_MAX_IMAGE_PIXELS',
    type: 'number',
    unit: 'pixels',
    help:
      'largest image (width x height) a transform decodes, and largest resized image or output ' +
      'it may make; larger ones are refused before any pixel is allocated',
  },
  {
    field: 'maxTransformSide',
    flag: '--max-transform-side <n>',
    env: 'SCYLLA_LOADER_MAX_TRANSFORM_SIDE',
    type: 'number',
    unit: 'pixels',
    help: 'largest resize or crop side a request may ask for',
  },
  {
    field: 'transformConcurrency',
    flag: '--transform-concurrency <n>',
    env: 'SCYLLA_LOADER_TRANSFORM_CONCURRENCY',
    type: 'number',
    unit: 'transforms',
    help: 'transforms the process runs at once (0: one per CPU of its quota)',
  },
  {
    field: 'transformsPerStream',
    flag: '--transforms-per-stream <n>',
    env: 'SCYLLA_LOADER_TRANSFORMS_PER_STREAM',
    type: 'number',
    unit: 'transforms',
    help: 'transforms one stream runs at once (0: as many as the process)',
  },
  {
    field: 'reloadIntervalMs',
    flag: '--reload-interval-ms <n>',
    env: 'SCYLLA_LOADER_RELOAD_INTERVAL_MS',
    type: 'number',
    unit: 'ms',
    help: 'how often the TLS files and the tokens file are read again for changes (ms)',
  },
  {
    field: 'groupReads',
    flag: '--group-reads <mode>',
    env: 'SCYLLA_LOADER_GROUP_READS',
    type: 'choice',
    help:
      'read small samples in groups sharing replicas, one multi-partition query each: auto ' +
      '(when the mean sample is at most --group-reads-max-bytes), on, off',
  },
  {
    field: 'nativeTransforms',
    flag: '--native-transforms <mode>',
    env: 'SCYLLA_LOADER_NATIVE_TRANSFORMS',
    type: 'choice',
    help:
      'decode JPEG and 8-bit PNG samples of raw-output transforms with the native module ' +
      '(native/, several times less CPU than sharp): auto (when it is built), on (refuse to ' +
      'start without it), off (sharp for every sample)',
  },
  {
    field: 'extraPaths',
    flag: '--extra-path <name=hosts[:port]>',
    env: 'SCYLLA_LOADER_EXTRA_PATHS',
    type: 'list',
    help:
      'another route to the database (own contact points), e.g. route2=10.0.1.5,10.0.1.6:9042; ' +
      'repeatable; the environment variable separates paths with ;',
    defaultText: 'none',
  },
  {
    paths: ['tls.certFile', 'tls'],
    flag: '--tls-cert <file>',
    env: 'SCYLLA_LOADER_TLS_CERT',
    type: 'text',
    help: 'PEM certificate chain: serve gRPC over TLS',
    defaultText: 'off',
  },
  {
    paths: ['tls.keyFile'],
    flag: '--tls-key <file>',
    env: 'SCYLLA_LOADER_TLS_KEY',
    type: 'text',
    help: "PEM private key of --tls-cert's certificate",
    defaultText: 'off',
  },
  {
    paths: ['tls.clientCaFile'],
    flag: '--tls-client-ca <file>',
    env: 'SCYLLA_LOADER_TLS_CLIENT_CA',
    type: 'text',
    help: 'PEM CA bundle: require client certificates signed by it (mTLS)',
    defaultText: 'off',
  },
  {
    field: 'replication',
    flag: '--replication <spec>',
    env: 'SCYLLA_LOADER_REPLICATION',
    type: 'text',
    help:
      "replication of a dataset an IngestSamples call makes, and of the training ledger's " +
      'keyspace: simple:<rf> or nts:<dc>=<rf>,... (production: nts:<dc>=3); an existing ' +
      'keyspace keeps its own',
  },
  {
    field: 'ledgerKeyspace',
    flag: '--ledger-keyspace <name>',
    env: 'SCYLLA_LOADER_LEDGER_KEYSPACE',
    type: 'text',
    help:
      'keyspace of the training ledger: where streams that name a job record their batches ' +
      '(made the first time one does; docs/ledger.md)',
  },
  {
    field: 'ledgerTtlDays',
    flag: '--ledger-ttl-days <n>',
    env: 'SCYLLA_LOADER_LEDGER_TTL_DAYS',
    type: 'number',
    unit: 'days',
    help: 'days a ledger row is kept (0: until `ledger drop`)',
  },
  ...INGEST_CAP_SETTINGS,
  {
    field: 'authTokensFile',
    flag: '--auth-tokens <file>',
    env: 'SCYLLA_LOADER_AUTH_TOKENS_FILE',
    type: 'text',
    help: 'tokens file (hashes, roles, datasets): require a bearer token on every call but health',
    defaultText: 'off',
  },
  {
    flag: '--ready-file <file>',
    env: 'SCYLLA_LOADER_READY_FILE',
    type: 'text',
    help:
      'once serving, write the bound ports as JSON ({"port", "metricsPort", "workers", "pid"}) ' +
      'to this file (replaced whole, removed on shutdown): the signal scripts and tests wait for',
    defaultText: 'none',
  },
  {
    field: 'resumeKey',
    env: 'SCYLLA_LOADER_RESUME_KEY',
    type: 'text',
    help:
      'key (at least 32 bytes, hex or base64) that authenticates resume tokens; the same on ' +
      'every replica, so a stream can resume on any of them. Several keys, comma-separated, ' +
      'rotate it without invalidating tokens in flight: tokens and job checkpoints are ' +
      'signed with the first and accepted under any (OLD,NEW then NEW,OLD then NEW; see ' +
      'docs/security.md)',
    defaultText: 'random, this process only',
    secret: true,
  },
  {
    env: 'SCYLLA_LOADER_LOG_LEVEL',
    type: 'choice',
    choices: ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'],
    help: 'level of the JSON log lines on stdout',
    defaultText: 'info',
  },
  ...DB_SETTINGS,
  ...DB_POOL_SETTINGS,
];

/** How the core's messages name `serve`'s settings: as this list (and the database's) declares them. */
export function serveSettingNames(): Required<SettingNames> {
  const nameOf = (field: CoreSetting): string => {
    const setting = SERVE_SETTINGS.find((s) => s.field === field);
    if (setting === undefined) throw new Error(`serve declares no setting ${field}`);
    return settingName(setting);
  };
  return {
    resumeKey: nameOf('resumeKey'),
    cacheDir: nameOf('cacheDir'),
    maxHeldBytes: nameOf('maxHeldBytes'),
    maxMixedEpoch: nameOf('maxMixedEpoch'),
    maxImagePixels: nameOf('maxImagePixels'),
    ...dbSettingNames(),
  };
}
