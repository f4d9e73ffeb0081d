import cluster from 'node:cluster';
import { Command, Option } from 'commander';
import { ZodError } from 'zod';
import { serverConfigSchema, type ServerConfig } from '../../server/config/serverConfig.js';
import { resolveWorkerCount } from '../../server/cluster/resolveWorkerCount.js';
import { runClusterPrimary } from '../../server/cluster/runClusterPrimary.js';
import { runClusterWorker } from '../../server/cluster/runClusterWorker.js';
import { createLoaderServer } from '../../server/createLoaderServer.js';
import { createLogger } from '../../server/createLogger.js';
import { invalidArgument, parseResumeKey } from '../../core/index.js';
import { addDbOptions, dbConfigFromFlags, type DbFlags } from '../dbOptions.js';
import { parseExtraPaths, type ExtraPathSpec } from '../parseExtraPaths.js';
import { runAction } from '../runAction.js';

/** Flags of `serve` (numbers arrive as text; the config schema checks them). */
export interface ServeFlags extends DbFlags {
  host?: string;
  grpcPort?: string;
  workers?: string;
  metricsPort?: string;
  maxStreams?: string;
  maxBatchSize?: string;
  maxMessageBytes?: string;
  defaultPrefetch?: string;
  maxPrefetch?: string;
  maxWindowSamples?: string;
  maxInFlight?: string;
  readAttempts?: string;
  retryBaseMs?: string;
  graceMs?: string;
  keepaliveTimeMs?: string;
  keepaliveTimeoutMs?: string;
  idCacheBytes?: string;
  maxImagePixels?: string;
  maxTransformSide?: string;
  transformConcurrency?: string;
  transformsPerStream?: string;
  connectionsPerHost?: string;
  requestTimeoutMs?: string;
  extraPath: ExtraPathSpec[];
  tlsCert?: string;
  tlsKey?: string;
  tlsClientCa?: string;
  authTokens?: string;
  reloadIntervalMs?: string;
  groupReads?: string;
  nativeTransforms?: string;
  groupReadsMaxBytes?: string;
  groupReadsSize?: string;
}

/** A numeric flag: config field, flag, environment variable, help. */
type NumericFlag = [keyof ServerConfig, string, string, string];

const NUMERIC_FLAGS: NumericFlag[] = [
  ['port', '--grpc-port', 'SCYLLA_LOADER_GRPC_PORT', 'gRPC port (0: a free one)'],
  [
    'workers',
    '--workers',
    'SCYLLA_LOADER_WORKERS',
    'loader processes sharing the port, each a full loader (0: one per CPU of the quota)',
  ],
  ['metricsPort', '--metrics-port', 'SCYLLA_LOADER_METRICS_PORT', '/metrics and /healthz port'],
  [
    'maxConcurrentStreams',
    '--max-streams',
    'SCYLLA_LOADER_MAX_STREAMS',
    'open streams before new ones get RESOURCE_EXHAUSTED',
  ],
  [
    'maxBatchSize',
    '--max-batch-size',
    'SCYLLA_LOADER_MAX_BATCH_SIZE',
    'largest batch a request may ask for',
  ],
  [
    'maxMessageBytes',
    '--max-message-bytes',
    'SCYLLA_LOADER_MAX_MESSAGE_BYTES',
    'largest response message',
  ],
  [
    'defaultPrefetch',
    '--default-prefetch',
    'SCYLLA_LOADER_DEFAULT_PREFETCH',
    'batches requested ahead when a request says 0',
  ],
  [
    'maxPrefetch',
    '--max-prefetch',
    'SCYLLA_LOADER_MAX_PREFETCH',
    'largest prefetch a request may ask for',
  ],
  [
    'maxWindowSamples',
    '--max-window-samples',
    'SCYLLA_LOADER_MAX_WINDOW_SAMPLES',
    'positions one stream may hold in its window (prefetch x batch size, growth included)',
  ],
  [
    'maxInFlightPerStream',
    '--max-in-flight',
    'SCYLLA_LOADER_MAX_IN_FLIGHT',
    'sample reads in flight per stream',
  ],
  [
    'readAttempts',
    '--read-attempts',
    'SCYLLA_LOADER_READ_ATTEMPTS',
    'attempts per sample read before UNAVAILABLE',
  ],
  [
    'groupReadsMaxBytes',
    '--group-reads-max-bytes',
    'SCYLLA_LOADER_GROUP_READS_MAX_BYTES',
    'with --group-reads auto: mean sample size (bytes, as ingested) at or below which reads are grouped',
  ],
  [
    'groupReadsSize',
    '--group-reads-size',
    'SCYLLA_LOADER_GROUP_READS_SIZE',
    'samples per grouped read query at most',
  ],
  ['retryBaseMs', '--retry-base-ms', 'SCYLLA_LOADER_RETRY_BASE_MS', 'first retry backoff (ms)'],
  [
    'shutdownGraceMs',
    '--grace-ms',
    'SCYLLA_LOADER_SHUTDOWN_GRACE_MS',
    'after SIGTERM, how long streams may run on before UNAVAILABLE (ms)',
  ],
  [
    'keepaliveTimeMs',
    '--keepalive-time-ms',
    'SCYLLA_LOADER_KEEPALIVE_TIME_MS',
    'HTTP/2 ping interval (ms)',
  ],
  [
    'keepaliveTimeoutMs',
    '--keepalive-timeout-ms',
    'SCYLLA_LOADER_KEEPALIVE_TIMEOUT_MS',
    'HTTP/2 ping timeout (ms)',
  ],
  ['idCacheBytes', '--id-cache-bytes', 'SCYLLA_LOADER_ID_CACHE_BYTES', 'bytes of split ids cached'],
  [
    'maxImagePixels',
    '--max-image-pixels',
    'SCYLLA_LOADER_MAX_IMAGE_PIXELS',
    'largest image (width x height) a transform decodes; larger ones are refused unread',
  ],
  [
    'maxTransformSide',
    '--max-transform-side',
    'SCYLLA_LOADER_MAX_TRANSFORM_SIDE',
    'largest resize or crop side a request may ask for',
  ],
  [
    'transformConcurrency',
    '--transform-concurrency',
    'SCYLLA_LOADER_TRANSFORM_CONCURRENCY',
    'transforms the process runs at once (0: one per CPU of its quota)',
  ],
  [
    'transformsPerStream',
    '--transforms-per-stream',
    'SCYLLA_LOADER_TRANSFORMS_PER_STREAM',
    'transforms one stream runs at once (0: as many as the process)',
  ],
  [
    'reloadIntervalMs',
    '--reload-interval-ms',
    'SCYLLA_LOADER_RELOAD_INTERVAL_MS',
    'how often the TLS files and the tokens file are read again for changes (ms)',
  ],
];

/** Path flags of the gRPC port's security: flag, environment variable, help. */
const SECURITY_FLAGS: [string, string, string][] = [
  ['--tls-cert <file>', 'SCYLLA_LOADER_TLS_CERT', 'PEM certificate chain: serve gRPC over TLS'],
  ['--tls-key <file>', 'SCYLLA_LOADER_TLS_KEY', "PEM private key of --tls-cert's certificate"],
  [
    '--tls-client-ca <file>',
    'SCYLLA_LOADER_TLS_CLIENT_CA',
    'PEM CA bundle: require client certificates signed by it (mTLS)',
  ],
  [
    '--auth-tokens <file>',
    'SCYLLA_LOADER_AUTH_TOKENS_FILE',
    'tokens file (hashes, roles, datasets): require a bearer token on every call but health',
  ],
];

/** Database flags `serve` adds to the common ones: the pool matters for a server. */
const DB_NUMERIC_FLAGS: [string, string, string, string][] = [
  [
    'connectionsPerHost',
    '--connections-per-host',
    'SCYLLA_LOADER_CONNECTIONS_PER_HOST',
    'driver connections per database host',
  ],
  [
    'requestTimeoutMs',
    '--request-timeout-ms',
    'SCYLLA_LOADER_REQUEST_TIMEOUT_MS',
    'per-request database timeout (ms)',
  ],
];

/** Registers `serve`: runs the gRPC loader until SIGTERM or SIGINT. */
export function registerServeCommand(program: Command): void {
  const defaults = serverConfigSchema.parse({ db: {} });
  const cmd = program
    .command('serve')
    .description(
      'serve training batches over gRPC (resume-token key from SCYLLA_LOADER_RESUME_KEY, ' +
        'database credentials from SCYLLA_LOADER_DB_USERNAME and SCYLLA_LOADER_DB_PASSWORD or ' +
        'SCYLLA_LOADER_DB_PASSWORD_FILE, ' +
        'log level from SCYLLA_LOADER_LOG_LEVEL)',
    )
    .addOption(
      new Option('--host <address>', `address to listen on (default ${defaults.host})`).env(
        'SCYLLA_LOADER_HOST',
      ),
    );
  for (const [field, flag, env, help] of NUMERIC_FLAGS) {
    cmd.addOption(
      new Option(`${flag} <n>`, `${help} (default ${String(defaults[field])})`).env(env),
    );
  }
  for (const [field, flag, env, help] of DB_NUMERIC_FLAGS) {
    const value = defaults.db[field as keyof typeof defaults.db];
    cmd.addOption(new Option(`${flag} <n>`, `${help} (default ${String(value)})`).env(env));
  }
  cmd.addOption(
    new Option(
      '--group-reads <mode>',
      'read small samples in groups sharing replicas, one multi-partition query each: auto ' +
        '(when the mean sample is at most --group-reads-max-bytes), on, off ' +
        `(default ${defaults.groupReads})`,
    )
      .choices(['auto', 'on', 'off'])
      .env('SCYLLA_LOADER_GROUP_READS'),
  );
  cmd.addOption(
    new Option(
      '--native-transforms <mode>',
      'decode JPEG and 8-bit PNG samples of raw-output transforms with the native module ' +
        '(native/, several times less CPU than sharp): auto (when it is built), on (refuse to ' +
        `start without it), off (sharp for every sample) (default ${defaults.nativeTransforms})`,
    )
      .choices(['auto', 'on', 'off'])
      .env('SCYLLA_LOADER_NATIVE_TRANSFORMS'),
  );
  cmd.addOption(
    new Option(
      '--extra-path <name=hosts[:port]>',
      'another route to the database (own contact points), e.g. route2=10.0.1.5,10.0.1.6:9042; ' +
        'repeatable; the environment variable separates paths with ;',
    )
      .env('SCYLLA_LOADER_EXTRA_PATHS')
      .argParser((v: string, acc: ExtraPathSpec[] | undefined) => [
        ...(acc ?? []),
        ...parseExtraPaths(v),
      ])
      .default([], 'none'),
  );
  for (const [flag, env, help] of SECURITY_FLAGS) {
    cmd.addOption(new Option(flag, `${help} (default: off)`).env(env));
  }
  addDbOptions(cmd).action(
    runAction(async (flags: ServeFlags) => {
      const config = serveConfigFromFlags(flags);
      const logger = createLogger();
      if (cluster.isWorker) {
        await runClusterWorker(config, logger).catch((err: unknown) => {
          // The IPC channel keeps a worker alive: one that cannot start must exit (after the
          // error is written) for the primary to see it fail.
          setImmediate(() => process.exit(1));
          throw err;
        });
        return;
      }
      // Settings the workers would each refuse are refused once, here, before any is forked.
      if (config.resumeKey !== undefined) parseResumeKey(config.resumeKey);
      const workers = resolveWorkerCount(config.workers);
      logger.info({ config: redactConfig(config), workers }, 'serve configuration');
      const server =
        workers > 1
          ? await runClusterPrimary(config, workers, logger)
          : await createLoaderServer(config, { logger });
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals): void => {
        if (stopping) {
          logger.warn({ signal }, 'second signal during shutdown; exiting now');
          process.exit(1);
        }
        stopping = true;
        server.shutdown(`received ${signal}`).then(
          () => process.exit(0),
          (err: unknown) => {
            logger.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }),
  );
}

/**
 * The validated server configuration from `serve`'s flags and environment. Invalid values are
 * reported by flag and environment variable, not by the internal field name.
 */
export function serveConfigFromFlags(flags: ServeFlags): ServerConfig {
  const raw: Record<string, unknown> = {};
  if (flags.host !== undefined) raw.host = flags.host;
  if (flags.groupReads !== undefined) raw.groupReads = flags.groupReads;
  if (flags.nativeTransforms !== undefined) raw.nativeTransforms = flags.nativeTransforms;
  const record = flags as unknown as Record<string, string | undefined>;
  for (const [field, flag] of NUMERIC_FLAGS) {
    const text = record[camel(flag)];
    if (text !== undefined) raw[field] = toNumber(text);
  }
  const db: Record<string, unknown> = { ...dbConfigFromFlags(flags) };
  for (const [field, flag] of DB_NUMERIC_FLAGS) {
    const text = record[camel(flag)];
    if (text !== undefined) db[field] = toNumber(text);
  }
  raw.db = db;
  // A path without a port is another route to the same cluster: same CQL port as the primary.
  raw.extraPaths = flags.extraPath.map((p) => ({ ...p, port: p.port ?? db.port }));
  if (process.env.SCYLLA_LOADER_RESUME_KEY) raw.resumeKey = process.env.SCYLLA_LOADER_RESUME_KEY;
  const tls = tlsFromFlags(flags);
  if (tls !== undefined) raw.tls = tls;
  if (flags.authTokens !== undefined) raw.authTokensFile = flags.authTokens;
  try {
    return serverConfigSchema.parse(raw);
  } catch (err) {
    if (!(err instanceof ZodError)) throw err;
    const lines = err.issues.map((i) => `  ${describeField(i.path)}: ${i.message}`);
    throw invalidArgument(`invalid serve configuration\n${lines.join('\n')}`, err);
  }
}

/**
 * The TLS files of the flags, or undefined for plain text. A certificate needs its key and a
 * client CA needs both; a partial set is refused rather than silently served in plain text.
 */
function tlsFromFlags(flags: ServeFlags): ServerConfig['tls'] {
  const { tlsCert, tlsKey, tlsClientCa } = flags;
  if (tlsCert === undefined && tlsKey === undefined && tlsClientCa === undefined) return undefined;
  if (tlsCert === undefined || tlsKey === undefined) {
    const missing = [
      tlsCert === undefined ? '--tls-cert (SCYLLA_LOADER_TLS_CERT)' : undefined,
      tlsKey === undefined ? '--tls-key (SCYLLA_LOADER_TLS_KEY)' : undefined,
    ].filter((m) => m !== undefined);
    const wanted = tlsClientCa === undefined ? 'TLS' : '--tls-client-ca (mTLS)';
    throw invalidArgument(
      `${wanted} needs a certificate and its key: set ${missing.join(' and ')}`,
    );
  }
  return {
    certFile: tlsCert,
    keyFile: tlsKey,
    ...(tlsClientCa ? { clientCaFile: tlsClientCa } : {}),
  };
}

/**
 * The configuration as logged: secrets replaced, so logs can be shared. The TLS and tokens
 * settings are paths, not secrets, and are kept.
 */
function redactConfig(config: ServerConfig): Record<string, unknown> {
  return {
    ...config,
    resumeKey: config.resumeKey === undefined ? '(random, this process only)' : '(redacted)',
    db: { ...config.db, ...(config.db.password === undefined ? {} : { password: '(redacted)' }) },
  };
}

function describeField(path: PropertyKey[]): string {
  const [first, second] = path;
  const numeric = [...NUMERIC_FLAGS, ...DB_NUMERIC_FLAGS].find(
    ([field]) => field === (first === 'db' ? second : first),
  );
  if (numeric) return `${numeric[1]} (${numeric[2]})`;
  if (first === 'host') return '--host (SCYLLA_LOADER_HOST)';
  if (first === 'resumeKey') return 'SCYLLA_LOADER_RESUME_KEY';
  if (first === 'authTokensFile') return '--auth-tokens (SCYLLA_LOADER_AUTH_TOKENS_FILE)';
  if (first === 'tls') {
    const flag = { certFile: '--tls-cert', keyFile: '--tls-key', clientCaFile: '--tls-client-ca' };
    const found = SECURITY_FLAGS.find(([f]) => f.startsWith(flag[second as keyof typeof flag]));
    if (found) return `${found[0].split(' ')[0]} (${found[1]})`;
  }
  if (first === 'extraPaths') {
    return `--extra-path (SCYLLA_LOADER_EXTRA_PATHS) ${path.slice(1).map(String).join('.')}`;
  }
  return path.map(String).join('.') || 'configuration';
}

/** Commander's attribute name for a long flag: `--max-in-flight` → `maxInFlight`. */
function camel(flag: string): string {
  return flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Whole text as a number; blank or partly numeric text becomes NaN, which the schema refuses. */
function toNumber(text: string): number {
  return text.trim() === '' ? Number.NaN : Number(text);
}
