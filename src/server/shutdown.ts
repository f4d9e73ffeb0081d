import { status, type Server } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { StreamAdmission } from './admission.js';
import type { MetricsServer } from './metricsServer.js';
import type { DbPath } from '../core/index.js';

/** Details of the UNAVAILABLE status that streams still open after the grace period get. */
export const SHUTDOWN_DETAILS = 'loader shutting down; resume with the last resume token';

/** How long calls get to finish once streams are done, before the connections are cut. */
const FLUSH_MS = 2_000;

/** What {@link shutdownLoader} stops, in order. */
export interface ShutdownParts {
  server: Server;
  admission: StreamAdmission;
  /** Turns the gRPC health service and `/healthz` to NOT_SERVING. */
  stopServing: () => void;
  metricsServer: MetricsServer;
  paths: DbPath[];
  graceMs: number;
  logger: Logger;
}

/**
 * Stops a loader without losing a trainer's place: first health says NOT_SERVING so load
 * balancers move new work elsewhere; the server stops accepting calls (GOAWAY to clients,
 * which reconnect to another replica); open streams run on for the grace period; any left
 * then end with UNAVAILABLE, which clients treat as "resume with the last resume token";
 * last, the metrics server and the database clients close.
 */
export async function shutdownLoader(parts: ShutdownParts, reason: string): Promise<void> {
  const { server, admission, logger } = parts;
  const started = Date.now();
  logger.info(
    { reason, openStreams: admission.openStreams, graceMs: parts.graceMs },
    'loader shutting down',
  );
  parts.stopServing();
  admission.close();
  const drained = new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
  // Wait for the streams, not for every call: a health Watch never ends by itself and would
  // hold tryShutdown for the whole grace period.
  const idle = admission.whenIdle(parts.graceMs);
  const done = await Promise.race([drained.then(() => true), idle.then(() => false)]);
  if (!done) {
    if (!(await idle)) {
      const ended = admission.endAll({ code: status.UNAVAILABLE, details: SHUTDOWN_DETAILS });
      logger.warn(
        { endedStreams: ended },
        'grace period over; open streams ended with UNAVAILABLE',
      );
    }
    // Statuses are written after each stream's buffered batches, and short unary calls may
    // still be answering; give them a moment, then cut what is left (health watches).
    if (!(await settlesWithin(drained, FLUSH_MS))) server.forceShutdown();
  }
  await parts.metricsServer.close();
  const closed = await Promise.allSettled(parts.paths.map((p) => p.client.shutdown()));
  closed.forEach((r, i) => {
    if (r.status === 'rejected') {
      logger.warn({ err: r.reason, path: parts.paths[i]?.name }, 'database client shutdown failed');
    }
  });
  logger.info({ seconds: (Date.now() - started) / 1000 }, 'loader stopped');
}

/** True when `promise` settles within `ms`; the timer does not outlive it. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
