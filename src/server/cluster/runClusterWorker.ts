import process from 'node:process';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/serverConfig.js';
import { createLoaderServer, type LoaderServer } from '../createLoaderServer.js';
import { type ClusterHealth, type WorkerListening, isMessage } from './clusterMessages.js';
import { answerMetricsRequests } from './clusterMetrics.js';

/**
 * Runs one worker of `serve --workers N`: a full loader (its own database connections, caches
 * and streams) on the port the workers share, without a metrics server of its own (the
 * primary asks each worker for its registry over IPC and serves the sum). It tells the
 * primary once it serves, takes the cluster's health from it, and drains on SIGTERM or SIGINT
 * like a single loader. If the primary dies, Node ends the worker (its IPC channel closes).
 */
export async function runClusterWorker(
  config: ServerConfig,
  logger: Logger,
): Promise<LoaderServer> {
  const server = await createLoaderServer(config, { logger, metricsServer: false });
  answerMetricsRequests(server.context.metrics.registry);
  process.on('message', (m: unknown) => {
    if (isMessage<ClusterHealth>(m, 'scylla-loader:health')) server.setDegraded(!m.serving);
  });
  const listening: WorkerListening = { type: 'scylla-loader:listening', port: server.port };
  process.send?.(listening);
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
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
  return server;
}
