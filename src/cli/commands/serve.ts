import cluster from 'node:cluster';
import { Command, Option } from 'commander';
import { checkOpenAccess } from '../../server/config/checkOpenAccess.js';
import { serverConfigSchema, type ServerConfig } from '../../server/config/serverConfig.js';
import { resolveWorkerCount } from '../../server/cluster/resolveWorkerCount.js';
import { clusterWorkersFromEnv } from '../../server/cluster/clusterWorkersEnv.js';
import {
  type CacheMemoryDefault,
  defaultCacheMemoryBytes,
  readMemoryFacts,
} from '../../server/config/defaultCacheMemory.js';
import { runClusterPrimary } from '../../server/cluster/runClusterPrimary.js';
import { runClusterWorker } from '../../server/cluster/runClusterWorker.js';
import { createLoaderServer } from '../../server/createLoaderServer.js';
import { createLogger } from '../../server/createLogger.js';
import {
  SampleCache,
  createLoaderMetrics,
  dbConfigSchema,
  invalidArgument,
  parseResumeKeys,
} from '../../core/index.js';
import { DB_POOL_SETTINGS, dbRawFromFlags, type DbFlags } from '../dbOptions.js';
import { SERVE_SETTINGS, serveSettingNames } from '../settings/serveSettings.js';
import { schemaFacts } from '../settings/schemaFacts.js';
import {
  type FlagValues,
  addSettingOptions,
  parseSettings,
  rawFromFlags,
  yesNo,
} from '../settings/settingOptions.js';
import { parseExtraPaths, type ExtraPathSpec } from '../parseExtraPaths.js';
import { runAction } from '../runAction.js';
import { removeReadyFile, writeReadyFile } from '../readyFile.js';

/** Flags of `serve` as Commander hands them over (numbers as text; the schema checks them). */
type ServeFlags = DbFlags &
  FlagValues & {
    extraPath: ExtraPathSpec[];
    tlsCert?: string;
    tlsKey?: string;
    tlsClientCa?: string;
    allowUnauthenticated?: boolean;
  };

const EXTRA_PATHS = SERVE_SETTINGS.find((s) => s.field === 'extraPaths')!;

/** Registers `serve`: runs the gRPC loader until SIGTERM or SIGINT. */
export function registerServeCommand(program: Command): void {
  const cmd = serveCommand();
  program.addCommand(cmd);
  cmd.action(
    runAction(async (flags: ServeFlags) => {
      const parsed = serveConfigFromFlags(flags);
      const logger = createLogger();
      if (cluster.isWorker) {
        const { config } = withDefaultCacheMemory(parsed, flags, clusterWorkersFromEnv());
        await runClusterWorker(config, logger).catch((err: unknown) => {
          // The IPC channel keeps a worker alive: one that cannot start must exit (after the
          // error is written) for the primary to see it fail.
          setImmediate(() => process.exit(1));
          throw err;
        });
        return;
      }
      const workers = resolveWorkerCount(parsed.workers);
      const { config, cacheDefault } = withDefaultCacheMemory(parsed, flags, workers);
      // Settings the workers would each refuse are refused once, here, before any is forked.
      if (config.resumeKey !== undefined) parseResumeKeys(config.resumeKey, serveSettingNames());
      checkOpenAccess(config);
      if (workers > 1 && config.cacheDir !== undefined) await checkCacheDir(config);
      logger.info(
        {
          config: redactConfig(config),
          workers,
          ...(cacheDefault ? { cacheMemoryDefault: cacheDefault.derivation } : {}),
        },
        'serve configuration',
      );
      const server =
        workers > 1
          ? await runClusterPrimary(config, workers, logger)
          : await createLoaderServer(config, { logger });
      const readyFile = typeof flags.readyFile === 'string' ? flags.readyFile : undefined;
      if (readyFile !== undefined) {
        const { port, metricsPort } = server;
        await writeReadyFile(readyFile, { port, metricsPort, workers, pid: process.pid });
      }
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals): void => {
        if (stopping) {
          logger.warn({ signal }, 'second signal during shutdown; exiting now');
          process.exit(1);
        }
        stopping = true;
        // Not ready from the first signal on: whoever waits for the file must not see it.
        const unready = readyFile === undefined ? Promise.resolve() : removeReadyFile(readyFile);
        Promise.all([unready, server.shutdown(`received ${signal}`)]).then(
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
 * `serve` with its options, derived from {@link SERVE_SETTINGS}, and no action (tests parse
 * it). Variables without a flag are listed after the options.
 */
export function serveCommand(): Command {
  const cmd = new Command('serve').description(
    'serve training batches over gRPC (every setting: docs/configuration.md)',
  );
  addSettingOptions(
    cmd,
    SERVE_SETTINGS.filter((s) => s !== EXTRA_PATHS),
    schemaFacts(serverConfigSchema),
  );
  cmd.addOption(
    new Option(EXTRA_PATHS.flag!, EXTRA_PATHS.help)
      .env(EXTRA_PATHS.env!)
      .argParser((v: string, acc: ExtraPathSpec[] | undefined) => [
        ...(acc ?? []),
        ...parseExtraPaths(v),
      ])
      .default([], 'none'),
  );
  const envOnly = SERVE_SETTINGS.filter((s) => s.flag === undefined && s.env !== undefined);
  cmd.addHelpText(
    'after',
    `\nEnvironment variables without a flag:\n${envOnly.map((s) => `  ${s.env}: ${s.help}`).join('\n')}`,
  );
  return cmd;
}

/**
 * The validated server configuration from `serve`'s flags and environment. Invalid values are
 * reported by flag and environment variable, not by the internal field name.
 */
export function serveConfigFromFlags(
  flags: ServeFlags,
  env: NodeJS.ProcessEnv = process.env,
): ServerConfig {
  const raw = rawFromFlags(
    SERVE_SETTINGS.filter((s) => s.field !== 'extraPaths' && !s.field?.startsWith('db.')),
    flags,
  );
  const db = dbRawFromFlags(flags, env, DB_POOL_SETTINGS);
  // Without contact points: the local development node.
  if (!Array.isArray(db.contactPoints) || db.contactPoints.length === 0) {
    db.contactPoints = ['127.0.0.1'];
  }
  raw.db = db;
  // A path without a port is another route to the same cluster: same CQL port as the primary.
  const port = db.port ?? dbConfigSchema.parse({}).port;
  raw.extraPaths = flags.extraPath.map((p) => ({ ...p, port: p.port ?? port }));
  if (env.SCYLLA_LOADER_RESUME_KEY) raw.resumeKey = env.SCYLLA_LOADER_RESUME_KEY;
  const open =
    flags.allowUnauthenticated === true || yesNo(env, 'SCYLLA_LOADER_ALLOW_UNAUTHENTICATED');
  if (open !== undefined) raw.allowUnauthenticated = open;
  const tls = tlsFromFlags(flags);
  if (tls !== undefined) raw.tls = tls;
  return parseSettings('serve configuration', SERVE_SETTINGS, () => serverConfigSchema.parse(raw));
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
 * `config` with the memory tier of the sample cache sized by default
 * ({@link defaultCacheMemoryBytes}) when neither `--cache-memory-bytes` nor its variable set
 * it; `cacheDefault` says how. `workers`: the processes that each hold a tier.
 */
function withDefaultCacheMemory(
  config: ServerConfig,
  flags: ServeFlags,
  workers: number,
): { config: ServerConfig; cacheDefault?: CacheMemoryDefault } {
  if (typeof flags.cacheMemoryBytes === 'string') return { config };
  const cacheDefault = defaultCacheMemoryBytes(readMemoryFacts(), workers, config);
  return { config: { ...config, cacheMemoryBytes: cacheDefault.bytes }, cacheDefault };
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

/** Opens and closes the disk cache `config` names: a folder that cannot hold it stops serve. */
async function checkCacheDir(config: ServerConfig): Promise<void> {
  const ignore = (): void => undefined;
  const cache = SampleCache.open(
    {
      cacheMemoryBytes: 0,
      cacheDir: config.cacheDir,
      cacheDiskBytes: config.cacheDiskBytes,
      settingNames: serveSettingNames(),
    },
    createLoaderMetrics(),
    ignore,
  );
  await cache?.close();
}
