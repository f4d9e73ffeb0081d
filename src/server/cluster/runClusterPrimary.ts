import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { LoaderError } from '../../core/index.js';
import { TokenStore } from '../auth/TokenStore.js';
import type { ServerConfig } from '../config/serverConfig.js';
import { resolveNativeTransforms } from '../resolveNativeTransforms.js';
import { startMetricsServer } from '../metricsServer.js';
import { type ClusterHealth, type WorkerListening, isMessage } from './clusterMessages.js';
import { createClusterMetrics } from './clusterMetrics.js';

import { CLUSTER_WORKERS_ENV } from './clusterWorkersEnv.js';

/** First wait before replacing a worker that died; doubled for each death in a row. */
const RESPAWN_BASE_MS = 500;
const RESPAWN_MAX_MS = 30_000;
/** A worker that lived this long resets the backoff: its death was not a crash loop. */
const STABLE_MS = 60_000;

/** The primary of a running cluster. */
export interface ClusterPrimary {
  /** The gRPC port every worker serves. */
  port: number;
  metricsPort: number;
  /** Drains every worker (SIGTERM, each with its grace period) and closes the metrics port. */
  shutdown(reason: string): Promise<void>;
}

/**
 * Runs `serve --workers N` as a node:cluster primary: N full loaders (each its own database
 * connections, caches and streams) share one gRPC port. node:cluster rather than
 * SO_REUSEPORT: Node 20 cannot set SO_REUSEPORT, and the primary's round-robin hands each new
 * connection to the next worker, so streams spread evenly (the kernel's hashing of
 * SO_REUSEPORT can pile connections from one host on one worker). A connection, and every
 * stream on it, stays on one worker, so the SDKs open a channel per stream.
 *
 * The primary holds no data: it serves `/metrics` (every worker's registry summed by
 * `createClusterMetrics`: the workers that answer in time, plus the cluster's own gauges) and `/healthz` (503 while
 * any worker is down or shutting down), tells the workers whether all serve (their gRPC
 * health says NOT_SERVING while one is down), replaces a worker that dies (its clients resume
 * on another with their tokens) after a backoff that grows while deaths repeat, and on
 * SIGTERM drains them all. A worker that fails before the cluster first serves (a database
 * that cannot be reached, a port in use) fails the whole start instead of looping.
 */
export async function runClusterPrimary(
  config: ServerConfig,
  count: number,
  logger: Logger,
): Promise<ClusterPrimary> {
  const registry = new Registry();
  const workersGauge = new Gauge({
    name: 'scylla_loader_workers',
    help: 'Loader worker processes, by state (serving, starting)',
    labelNames: ['state'],
    registers: [registry],
  });
  const restarts = new Counter({
    name: 'scylla_loader_worker_restarts_total',
    help: 'Loader workers that died and were replaced',
    registers: [registry],
  });
  const clusterMetrics = createClusterMetrics({
    registry,
    timeoutMs: config.metricsWorkerTimeoutMs,
  });
  const serving = new Set<number>();
  const bornAt = new Map<number, number>();
  let port = 0;
  let started = false;
  let stopping = false;
  let deathsInARow = 0;
  const allServe = (): boolean => !stopping && serving.size === count;
  const updateGauges = (): void => {
    const alive = Object.keys(cluster.workers ?? {}).length;
    workersGauge.set({ state: 'serving' }, serving.size);
    workersGauge.set({ state: 'starting' }, Math.max(0, alive - serving.size));
  };
  const broadcast = (): void => {
    const message: ClusterHealth = { type: 'scylla-loader:health', serving: allServe() };
    for (const w of Object.values(cluster.workers ?? {})) {
      if (w?.isConnected()) w.send(message);
    }
    updateGauges();
  };
  // Workers must share one resume key, or a stream could not resume on another worker (or on
  // the replacement of its own). Without a configured key, the primary draws one for them.
  const workerEnv: Record<string, string> = { [CLUSTER_WORKERS_ENV]: String(count) };
  if (config.resumeKey === undefined) {
    workerEnv.SCYLLA_LOADER_RESUME_KEY = randomBytes(32).toString('hex');
    logger.warn(
      'no SCYLLA_LOADER_RESUME_KEY set: the workers share a random key, so resume tokens work ' +
        'only until this loader stops; set the same key (openssl rand -hex 32) on every ' +
        'replica to resume across replicas and restarts',
    );
  }
  const fork = (): Worker => {
    const worker = cluster.fork(workerEnv);
    bornAt.set(worker.id, Date.now());
    updateGauges();
    return worker;
  };

  const firstServe = new Promise<void>((resolve, reject) => {
    cluster.on('message', (worker, m: unknown) => {
      if (!isMessage<WorkerListening>(m, 'scylla-loader:listening')) return;
      port = m.port;
      serving.add(worker.id);
      if (!started && serving.size === count) {
        started = true;
        resolve();
      } else if (started) {
        logger.info({ worker: worker.process.pid }, 'worker replaced and serving');
      }
      broadcast();
    });
    cluster.on('exit', (worker, code, signal) => {
      serving.delete(worker.id);
      const lived = Date.now() - (bornAt.get(worker.id) ?? Date.now());
      bornAt.delete(worker.id);
      if (stopping) return updateGauges();
      if (!started) {
        reject(
          new LoaderError(
            'UNAVAILABLE',
            `loader worker ${worker.process.pid} exited (${signal ?? `code ${code}`}) before ` +
              'the cluster served; its log lines above say why',
          ),
        );
        return;
      }
      restarts.inc();
      deathsInARow = lived > STABLE_MS ? 1 : deathsInARow + 1;
      const delay = Math.min(RESPAWN_MAX_MS, RESPAWN_BASE_MS * 2 ** (deathsInARow - 1));
      logger.error(
        { worker: worker.process.pid, code, signal, respawnInMs: delay },
        'loader worker died; its streams resume on the other workers; replacing it',
      );
      broadcast();
      setTimeout(() => {
        if (!stopping) fork();
      }, delay).unref();
    });
  });

  // The workers authorize calls with stores of their own; this one reads the same file on the
  // same schedule only so that /healthz can say when it stopped reading (the gauge comes from
  // the workers). Silent, since every worker logs the failure already. A file that cannot be
  // read stops the start here, once, before any worker is forked.
  const tokens =
    config.authTokensFile === undefined
      ? undefined
      : new TokenStore({
          file: config.authTokensFile,
          reloadIntervalMs: config.reloadIntervalMs,
          logger: logger.child({}, { level: 'silent' }),
        });
  for (let i = 0; i < count; i++) fork();
  try {
    await firstServe;
  } catch (err) {
    stopping = true;
    tokens?.close();
    await stopWorkers(0);
    throw err;
  }
  const metricsServer = await startMetricsServer({
    host: config.metricsHost ?? config.host,
    port: config.metricsPort,
    registry: clusterMetrics,
    isServing: allServe,
    notServingReason: () =>
      stopping ? 'shutting down' : `${serving.size} of ${count} workers serving`,
    // The workers load the same module from the same files, so the primary can say it.
    details: [resolveNativeTransforms(config.nativeTransforms).summary, () => tokens?.staleness()],
  }).catch(async (err: unknown) => {
    stopping = true;
    tokens?.close();
    await stopWorkers(0);
    throw new LoaderError(
      'UNAVAILABLE',
      `cannot serve metrics on ${config.metricsHost ?? config.host}:${config.metricsPort}: ${(err as Error).message}; ` +
        'pick another metrics port',
      { cause: err },
    );
  });
  logger.info(
    { host: config.host, port, metricsPort: metricsServer.port, workers: count },
    'loader serving',
  );

  /** SIGTERM to every worker; SIGKILL to those still running after `graceMs` plus a margin. */
  async function stopWorkers(graceMs: number): Promise<void> {
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
    const exits = workers.map(
      (w) =>
        new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve()))),
    );
    for (const w of workers) w.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const w of workers) if (!w.isDead()) w.process.kill('SIGKILL');
    }, graceMs + 15_000);
    await Promise.all(exits);
    clearTimeout(timer);
  }

  let stopped: Promise<void> | undefined;
  return {
    port,
    metricsPort: metricsServer.port,
    shutdown: (reason) =>
      (stopped ??= (async () => {
        logger.info({ reason, workers: serving.size }, 'loader cluster shutting down');
        stopping = true;
        broadcast();
        tokens?.close();
        await stopWorkers(config.shutdownGraceMs);
        await metricsServer.close();
        logger.info('loader cluster stopped');
      })()),
  };
}
