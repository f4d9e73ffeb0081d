import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { HealthImplementation } from 'grpc-health-check';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { LoaderServiceDefinition } from '../generated/scylla_loader/v1/LoaderService.js';
import type { StreamBatchesRequest__Output } from '../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type { StreamBatchesResponse } from '../generated/scylla_loader/v1/StreamBatchesResponse.js';
import type { PackageDefinition } from '@grpc/proto-loader';
import { loaderPackageDefinition, loadLoaderProto } from '../proto/loadLoaderProto.js';
import { createStreamAdmission, peerAddress } from './admission.js';
import { createAuthLayer } from './auth/createAuthLayer.js';
import { TokenStore } from './auth/TokenStore.js';
import {
  parseResumeKeys,
  connectDbPaths,
  LoaderError,
  SampleCache,
  defaultTransformSlots,
  readWorkerCpuQuota,
  TransformPool,
  ByteBudget,
  ReadSlots,
  Ledger,
  parseReplication,
  READS_PAST_THE_CAP,
  type NativeTransformModule,
  type SettingNames,
} from '../core/index.js';
import { clusterWorkersFromEnv } from './cluster/clusterWorkersEnv.js';
import type { ServerConfig } from './config/serverConfig.js';
import { SERVE_SETTING_NAMES } from './config/serveSettingNames.js';
import { createLogger } from './createLogger.js';
import { createReflectionService } from './createReflectionService.js';
import { resolveNativeTransforms } from './resolveNativeTransforms.js';
import { installFramedSend } from './framing/installFramedSend.js';
import { FLOW_CONTROL_WINDOW_BYTES, grpcServerOptions } from './grpcServerOptions.js';
import { raiseReceiveWindow } from './framing/raiseReceiveWindow.js';
import type { MessageShape } from './limits/countDecodedFields.js';
import { limitConnectionsPerPeer } from './limits/limitConnectionsPerPeer.js';
import { messageLimitInterceptor } from './limits/messageLimitInterceptor.js';
import { withLayers } from './middleware.js';
import { requestLimitOf } from './limits/requestLimits.js';
import { startMetricsServer, type MetricsServer } from './metricsServer.js';
import { createServerMetrics, type ServerMetrics } from './metrics/serverMetrics.js';
import { createCreateSplitsHandler } from './rpc/createSplits.js';
import { createDescribeDatasetHandler } from './rpc/describeDataset.js';
import { createGetLedgerHandler } from './rpc/getLedger.js';
import { createGetSplitHandler } from './rpc/getSplit.js';
import { createIngestSamplesHandler, ingestDatasetOf } from './rpc/ingestSamples.js';
import { createListSplitsHandler } from './rpc/listSplits.js';
import { createStreamBatchesHandler } from './rpc/streamBatches.js';
import { refuseUndecodable, withTolerantDeserializers } from './rpc/undecodableRequests.js';
import type { ServerContext } from './ServerContext.js';
import { shutdownLoader } from './shutdown.js';
import { createTlsCredentials, type TlsCredentials } from './tls/createTlsCredentials.js';

/** Fully-qualified name of the loader's service, as health checks and reflection name it. */
export const LOADER_SERVICE_NAME = 'scylla_loader.v1.LoaderService';

/** A running loader. */
export interface LoaderServer {
  /** gRPC port (the free one picked for port 0). */
  port: number;
  /** `/metrics` and `/healthz` port. */
  metricsPort: number;
  context: ServerContext;
  /**
   * Stops in order: health NOT_SERVING, no new calls, open streams get the grace period and
   * then UNAVAILABLE, metrics server and database clients closed. Calling it again returns the
   * same promise.
   */
  shutdown(reason?: string): Promise<void>;
  /**
   * Health says NOT_SERVING while `degraded` is true, whatever this loader's own state: a
   * worker of a cluster is told so while another worker is down.
   */
  setDegraded(degraded: boolean): void;
}

/** Optional parts of {@link createLoaderServer}. */
export interface LoaderServerOptions {
  /** Logger to use; default: JSON on stdout at `SCYLLA_LOADER_LOG_LEVEL` (info). */
  logger?: Logger;
  /**
   * Makes the StreamBatches handler; default {@link createStreamBatchesHandler}. Admission,
   * metrics and shutdown wrap whatever it returns (tests use a handler that just waits).
   */
  streamBatchesHandler?: (
    ctx: ServerContext,
  ) => grpc.handleServerStreamingCall<StreamBatchesRequest__Output, StreamBatchesResponse>;
  /**
   * False for a worker of `serve --workers N`: the cluster's primary serves `/metrics` (all
   * workers aggregated) and `/healthz` on the metrics port; `metricsPort` is then 0.
   */
  metricsServer?: boolean;
  /**
   * How the core's messages name the settings a person may change; default: as `serve`
   * declares them ({@link SERVE_SETTING_NAMES}).
   */
  settingNames?: SettingNames;
}

/**
 * Starts a loader: database clients (one per path), the LoaderService with StreamBatches
 * behind the admission limit, the standard health service, server reflection, and the
 * metrics HTTP server. Resolves once both ports listen and health says SERVING; if any part
 * fails to start, the parts already started are stopped and the error is thrown.
 */
export async function createLoaderServer(
  config: ServerConfig,
  opts: LoaderServerOptions = {},
): Promise<LoaderServer> {
  const logger = opts.logger ?? createLogger();
  const settingNames = opts.settingNames ?? SERVE_SETTING_NAMES;
  const resumeKey = resolveResumeKey(config, logger, settingNames);
  const metrics = createServerMetrics({ settingNames });
  dropMisnamedDefaultMetrics(metrics.registry);
  // Reflection describes the health service too, so grpcurl can call both without protos. Made
  // before connecting: a missing descriptor set fails the start with nothing to close.
  const reflection = createReflectionService();
  // TLS files and tokens file next, for the same reason: a bad one names itself at once.
  const security = openSecurity(config, logger, metrics);
  // The cache's folder too: one that cannot be opened stops the start, naming --cache-dir.
  let sampleCache: SampleCache | undefined;
  try {
    sampleCache = openSampleCache({ ...config, settingNames }, metrics, logger);
  } catch (err) {
    security.close();
    throw err;
  }
  let paths: Awaited<ReturnType<typeof connectDbPaths>>;
  try {
    paths = await connectDbPaths({
      ...config,
      settingNames,
      // The cap, and the few queries each stream may have past it.
      readsInFlight: config.maxReadsInFlight + READS_PAST_THE_CAP * config.maxConcurrentStreams,
    });
  } catch (err) {
    security.close();
    await sampleCache?.close();
    throw err;
  }
  const decoders = resolveNativeTransforms(config.nativeTransforms);
  const transforms = createTransformPool(config, metrics, logger, decoders.native, settingNames);
  if (decoders.asConfigured) logger.info({ decoders: decoders.summary }, 'transform decoders');
  else logger.warn({ decoders: decoders.summary }, 'native transform path off');
  const context: ServerContext = {
    config,
    paths,
    metrics,
    logger,
    resumeKey,
    settingNames,
    transforms,
    heldBytes: new ByteBudget(config.maxHeldBytes, metrics.heldBytes),
    readSlots: new ReadSlots(config.maxReadsInFlight, metrics),
    ledger: new Ledger({
      client: paths[0]!.client,
      keyspace: config.ledgerKeyspace,
      replication: parseReplication(config.replication),
      ttlSeconds: config.ledgerTtlDays * 86_400,
      metrics,
    }),
    ...(sampleCache ? { sampleCache } : {}),
  };

  if (!installFramedSend()) {
    logger.warn(
      'this @grpc/grpc-js has no server serializeMessage to hook: every batch is copied once ' +
        'more on its way out (more CPU per GB, same bytes)',
    );
  }
  // Authorization first: the interceptor checks the token from a call's headers before its
  // body is read, so a refused call takes no memory, no stream slot and reaches no handler.
  const auth = createAuthLayer(security.tokens, logger, (rpc, code) =>
    metrics.callsRefused.inc({ rpc, code }),
  );
  let warnedLimits = false;
  const limits = messageLimitInterceptor(() => {
    if (warnedLimits) return;
    warnedLimits = true;
    logger.warn(
      'this @grpc/grpc-js has no per-call frame decoder to reach: every method accepts ' +
        'requests up to the IngestSamples limit (32 MiB)',
    );
  });
  const server = new grpc.Server(
    grpcServerOptions(config, auth.interceptor ? [limits, auth.interceptor] : [limits]),
  );
  const admission = createStreamAdmission({
    limit: config.maxConcurrentStreams,
    perClient: config.maxStreamsPerClient || Math.ceil((config.maxConcurrentStreams * 3) / 4),
    // Under tokens a client is its token (a trainer's ranks share it, whatever their hosts);
    // without, its address.
    clientOf: (call) => {
      const grant = auth.grantOf(call.metadata);
      return grant ? `token:${grant.name}` : `peer:${peerAddress(call)}`;
    },
    metrics,
    logger,
  });
  const makeStreamHandler = opts.streamBatchesHandler ?? createStreamBatchesHandler;
  const definition = loaderPackageDefinition();
  const loaderService = loadLoaderProto(definition).scylla_loader.v1.LoaderService.service;
  // Outermost of the handlers' wrappers, a body that does not decode is the client's fault
  // (INVALID_ARGUMENT), and one that would decode into more than its method's budget of
  // fields is refused undecoded (RESOURCE_EXHAUSTED).
  const onUndecodable = (
    rpc: string,
    reason: string,
    peer: string,
    code: 'INVALID_ARGUMENT' | 'RESOURCE_EXHAUSTED',
  ): void => {
    logger.info({ rpc, peer, reason }, 'call refused: undecodable request');
    metrics.callsRefused.inc({ rpc, code });
  };
  server.addService(
    withTolerantDeserializers(withPreEncodedStreamBatches(loaderService), {
      fieldsOf: (rpc) => requestLimitOf(`/${LOADER_SERVICE_NAME}/${rpc}`).fields,
      shapeOf: (typeName) => shapeOf(definition, typeName),
    }),
    refuseUndecodable(
      LOADER_SERVICE_NAME,
      {
        StreamBatches: withLayers(
          makeStreamHandler(context),
          (handler) => auth.serverStream('StreamBatches', handler),
          admission.wrap,
        ),
        DescribeDataset: auth.unary('DescribeDataset', createDescribeDatasetHandler(context)),
        CreateSplits: auth.unary('CreateSplits', createCreateSplitsHandler(context)),
        ListSplits: auth.unary('ListSplits', createListSplitsHandler(context)),
        GetSplit: auth.unary('GetSplit', createGetSplitHandler(context)),
        GetLedger: auth.unaryLate('GetLedger', createGetLedgerHandler(context)),
        // Under the streams' admission too: a call holds up to its pipeline's bounds in memory.
        // Admitted before its first request is read for the dataset grant (the token is checked
        // already), so a client's calls waiting on first messages count against its slots.
        IngestSamples: withLayers(
          createIngestSamplesHandler(context),
          (handler) => admission.wrapBidi('IngestSamples', handler),
          (handler) => auth.bidiStream('IngestSamples', ingestDatasetOf, handler),
        ),
      },
      onUndecodable,
    ),
  );
  const health = new HealthImplementation({
    '': 'NOT_SERVING',
    [LOADER_SERVICE_NAME]: 'NOT_SERVING',
  });
  // Health stays open: probes carry no token.
  health.addToServer(server);
  // Reflection lists every method and message: behind "any valid token" when auth is on.
  reflection.addToServer(auth.guardServer(server));

  let serving = false;
  let metricsServer: MetricsServer | undefined;
  let port: number;
  try {
    port = await bind(server, config.host, config.port, security.credentials);
    const peersLimited = limitConnectionsPerPeer(server, config.maxConnectionsPerPeer, (peer) => {
      logger.info(
        { peer, limit: config.maxConnectionsPerPeer },
        'connection closed: peer at its limit of open connections',
      );
      metrics.callsRefused.inc({ rpc: 'connection', code: 'RESOURCE_EXHAUSTED' });
    });
    if (!peersLimited) {
      logger.warn(
        'this @grpc/grpc-js has no http2 servers to reach: --max-connections-per-peer is not ' +
          'applied, so one peer may open any number of connections',
      );
    }
    if (!raiseReceiveWindow(server, FLOW_CONTROL_WINDOW_BYTES)) {
      logger.warn(
        'this @grpc/grpc-js has no http2 servers to reach: requests keep the 64 KiB HTTP/2 ' +
          'window, which caps an IngestSamples upload at 64 KiB per round trip',
      );
    }
    metricsServer = !(opts.metricsServer ?? true)
      ? { port: 0, close: () => Promise.resolve() }
      : await startMetricsServer({
          host: config.metricsHost ?? config.host,
          port: config.metricsPort,
          registry: metrics.registry,
          isServing: () => serving,
          // A tokens file that stopped reading is a line, not a 503: the loader keeps serving
          // on the last good tokens, and taking it out would not bring the file back.
          details: [decoders.summary, () => security.tokens?.staleness()],
        }).catch((err: unknown) => {
          throw new LoaderError(
            'UNAVAILABLE',
            `cannot serve metrics on ${config.metricsHost ?? config.host}:${config.metricsPort}: ${(err as Error).message}; ` +
              'pick another metrics port',
            { cause: err },
          );
        });
  } catch (err) {
    server.forceShutdown();
    await metricsServer?.close();
    await Promise.allSettled(paths.map((p) => p.client.shutdown()));
    security.close();
    throw err;
  }
  let degraded = false;
  const applyHealth = (): void => {
    for (const name of ['', LOADER_SERVICE_NAME]) {
      health.setStatus(name, serving && !degraded ? 'SERVING' : 'NOT_SERVING');
    }
  };
  const setServing = (on: boolean): void => {
    serving = on;
    applyHealth();
  };
  setServing(true);
  logger.info(
    {
      host: config.host,
      port,
      metricsPort: metricsServer.port,
      paths: paths.map((p) => p.name),
      tls: config.tls === undefined ? 'off' : config.tls.clientCaFile ? 'mutual' : 'on',
      auth: auth.enabled ? 'tokens' : 'off',
    },
    opts.metricsServer === false ? 'worker serving' : 'loader serving',
  );

  const parts = {
    server,
    admission,
    stopServing: () => setServing(false),
    metricsServer,
    paths,
    graceMs: config.shutdownGraceMs,
    logger,
  };
  let stopping: Promise<void> | undefined;
  return {
    port,
    metricsPort: metricsServer.port,
    context,
    setDegraded: (on) => {
      degraded = on;
      applyHealth();
    },
    shutdown: (reason = 'shutdown requested') =>
      (stopping ??= shutdownLoader(parts, reason).finally(async () => {
        security.close();
        await sampleCache?.close();
      })),
  };
}

/**
 * The process's sample cache as the settings ask (undefined: none). A disk tier that fails at
 * run time is turned off with one warning; streams go on from memory and the database.
 */
function openSampleCache(
  config: ServerConfig & { settingNames: SettingNames },
  metrics: ServerMetrics,
  logger: Logger,
): SampleCache | undefined {
  const cache = SampleCache.open(
    config,
    metrics,
    (err) =>
      logger.warn(
        { err, cacheDir: config.cacheDir },
        'the disk tier of the sample cache failed and is off until restart; streams go on ' +
          'from memory and the database',
      ),
    (err) =>
      logger.warn(
        { err, cacheDir: config.cacheDir },
        'the disk cache found in --cache-dir did not open and was made anew, empty',
      ),
  );
  if (cache) {
    logger.info(
      {
        cacheMemoryBytes: config.cacheMemoryBytes,
        cacheDir: config.cacheDir ?? null,
        ...(config.cacheDir ? { cacheDiskBytes: config.cacheDiskBytes } : {}),
      },
      'sample cache on',
    );
  }
  return cache;
}

/**
 * The service with a StreamBatches serializer that sends a Buffer as it is: the handler writes
 * responses already encoded by `encodeBatchResponse`, which copies each sample once, where
 * protobufjs would copy the whole batch again. A response object (a handler passed in
 * {@link LoaderServerOptions.streamBatchesHandler} may write one) still goes through the
 * generated serializer. The loaded definition itself is left alone.
 */
function withPreEncodedStreamBatches(service: LoaderServiceDefinition): LoaderServiceDefinition {
  const method = service.StreamBatches;
  const serialize = method.responseSerialize;
  return {
    ...service,
    StreamBatches: {
      ...method,
      responseSerialize: (value: StreamBatchesResponse | Buffer): Buffer =>
        Buffer.isBuffer(value) ? value : serialize(value),
    },
  };
}

/**
 * The configured resume keys (the current one, then previous ones still accepted), or a
 * random key. A random key works for one process only: a stream cannot resume on another
 * replica or after a restart, so that is logged loudly.
 */
function resolveResumeKey(
  config: ServerConfig,
  logger: Logger,
  names: SettingNames,
): ServerContext['resumeKey'] {
  if (config.resumeKey !== undefined) return parseResumeKeys(config.resumeKey, names);
  logger.warn(
    'no SCYLLA_LOADER_RESUME_KEY set: using a random key, so resume tokens work only on this ' +
      'process until it stops; set the same key (openssl rand -hex 32) on every replica to ' +
      'resume across replicas and restarts',
  );
  return [randomBytes(32)];
}

/** A message type of the loaded proto by its full name, for the request field budgets. */
function shapeOf(definition: PackageDefinition, typeName: string): MessageShape | undefined {
  const entry = definition[typeName.startsWith('.') ? typeName.slice(1) : typeName];
  const type = (entry as { type?: unknown } | undefined)?.type;
  return type !== undefined && Array.isArray((type as { field?: unknown }).field)
    ? (type as MessageShape)
    : undefined;
}

/**
 * prom-client's default metrics include three gauges named `_total`, which `promtool check
 * metrics` rejects (prometheus/client_js#283, open). The same numbers, split by type, remain
 * in `nodejs_active_handles`, `nodejs_active_requests` and `nodejs_active_resources`.
 */
function dropMisnamedDefaultMetrics(registry: Registry): void {
  for (const name of [
    'nodejs_active_handles_total',
    'nodejs_active_requests_total',
    'nodejs_active_resources_total',
  ]) {
    registry.removeSingleMetric(name);
  }
}

/** The port's credentials and the token store, both following their files on disk. */
interface Security {
  credentials: grpc.ServerCredentials;
  tokens: TokenStore | undefined;
  /** Stops following the files. */
  close(): void;
}

/**
 * Reads the TLS files and the tokens file of the configuration (each failure names its file)
 * and starts following them. Without TLS the port is plain text; without a tokens file every
 * call is allowed.
 */
function openSecurity(config: ServerConfig, logger: Logger, metrics: ServerMetrics): Security {
  const interval = config.reloadIntervalMs;
  const tls: TlsCredentials | undefined =
    config.tls === undefined ? undefined : createTlsCredentials(config.tls, interval, logger);
  let tokens: TokenStore | undefined;
  try {
    tokens =
      config.authTokensFile === undefined
        ? undefined
        : new TokenStore({
            file: config.authTokensFile,
            reloadIntervalMs: interval,
            logger,
            metrics,
          });
  } catch (err) {
    tls?.close();
    throw err;
  }
  return {
    credentials: tls?.credentials ?? grpc.ServerCredentials.createInsecure(),
    tokens,
    close: () => {
      tls?.close();
      tokens?.close();
    },
  };
}

async function bind(
  server: grpc.Server,
  host: string,
  port: number,
  credentials: grpc.ServerCredentials,
): Promise<number> {
  // An IPv6 literal needs brackets in a gRPC target, as in a URL.
  const address =
    host.includes(':') && !host.startsWith('[') ? `[${host}]:${port}` : `${host}:${port}`;
  try {
    return await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
    );
  } catch (err) {
    throw new LoaderError(
      'UNAVAILABLE',
      `cannot listen for gRPC on ${address}: ${(err as Error).message}; pick another port or host`,
      { cause: err },
    );
  }
}

/**
 * The process's transform slots: as configured, or one per CPU of the process's quota. The
 * slots run on libuv's thread pool, whose size is fixed when the process first uses it (the CLI
 * sizes it at start, see `src/cli/sizeThreadPool.ts`): more slots than pool threads would only
 * queue inside libuv, so that is logged.
 */
function createTransformPool(
  config: ServerConfig,
  metrics: ServerMetrics,
  logger: Logger,
  native: NativeTransformModule | undefined,
  settingNames: SettingNames,
): TransformPool {
  const quota = readWorkerCpuQuota(clusterWorkersFromEnv());
  const slots = config.transformConcurrency || defaultTransformSlots(quota);
  const perStream = Math.min(slots, config.transformsPerStream || slots);
  const threads = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  const fields = { cpuQuota: Number(quota.toFixed(2)), slots, perStream, uvThreadPool: threads };
  if (slots > threads) {
    logger.warn(
      fields,
      'transform slots exceed the libuv thread pool; set UV_THREADPOOL_SIZE to at least slots + 2',
    );
  } else {
    logger.info(fields, 'transform pool');
  }
  return new TransformPool({
    slots,
    perStream,
    maxPixels: config.maxImagePixels,
    settingNames,
    metrics,
    ...(native ? { native } : {}),
  });
}
