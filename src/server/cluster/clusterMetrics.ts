import cluster from 'node:cluster';
import process from 'node:process';
import { AggregatorRegistry, Counter, Gauge, type Registry } from 'prom-client';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import { type MetricsReply, type MetricsRequest, isMessage } from './clusterMessages.js';

/** What the primary serves on `/metrics`: every worker that answered in time, summed. */
export interface ClusterMetrics {
  /** Prometheus text: the workers' registries aggregated, then the primary's own. */
  metrics(): Promise<string>;
  readonly contentType: string;
}

type WorkerMetrics = MetricObjectWithValues<MetricValue<string>>[];

/**
 * Gathers `/metrics` for `serve --workers N` in the primary. Each scrape asks every connected
 * worker for its registry over IPC and waits at most `timeoutMs`. The workers are summed
 * (prom-client's `AggregatorRegistry.aggregate`, each metric by its own aggregator): those that
 * answered with this scrape's figures, a worker that did not with the figures of its last
 * answer, so that no summed counter goes backwards (Prometheus would read a reset, and every
 * rate() would spike when the worker came back). `scylla_loader_metrics_workers_missing` says
 * how many did not answer this time. prom-client's own `clusterMetrics()` fails the whole
 * scrape (HTTP 500) when one worker misses its fixed 5 s: a scrape that fails hides exactly
 * the overload it should show, so a scrape here always answers. Replies that come after their
 * scrape gave up are dropped; a worker that exits is no longer waited for, nor summed.
 */
export function createClusterMetrics(options: {
  /** The primary's own registry (worker counts and restarts); the gauges are added to it. */
  registry: Registry;
  timeoutMs: number;
}): ClusterMetrics {
  const { registry, timeoutMs } = options;
  const missing = new Gauge({
    name: 'scylla_loader_metrics_workers_missing',
    help:
      'Workers that did not answer the last /metrics scrape in time (their figures in it are ' +
      'those of their last answer)',
    registers: [registry],
  });
  const missed = new Counter({
    name: 'scylla_loader_metrics_worker_timeouts_total',
    help: 'Times a worker did not answer a /metrics scrape in time, or answered with an error',
    registers: [registry],
  });
  /** Each live worker's latest figures, by worker id. */
  const latest = new Map<number, WorkerMetrics>();
  let nextId = 0;
  const pending = new Map<number, { waiting: Set<number>; failed: number; done: () => void }>();
  cluster.on('message', (worker, m: unknown) => {
    if (!isMessage<MetricsReply>(m, 'scylla-loader:metrics-reply')) return;
    const request = pending.get(m.requestId);
    if (!request || !request.waiting.delete(worker.id)) return;
    // A worker whose registry failed counts as missing: the gauge says so, not a 500.
    if (m.error === undefined && Array.isArray(m.metrics)) {
      latest.set(worker.id, m.metrics as WorkerMetrics);
    } else {
      request.failed++;
    }
    if (request.waiting.size === 0) request.done();
  });
  cluster.on('exit', (worker) => {
    // Its figures go with it (a replacement starts from zero, as after any restart).
    latest.delete(worker.id);
    for (const request of pending.values()) {
      if (request.waiting.delete(worker.id) && request.waiting.size === 0) request.done();
    }
  });

  /** Asks every connected worker; resolves with how many did not answer in time or failed. */
  const gather = async (): Promise<number> => {
    const requestId = nextId++;
    const request = { waiting: new Set<number>(), failed: 0, done: () => undefined };
    const message: MetricsRequest = { type: 'scylla-loader:metrics-request', requestId };
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      // A scrape in progress must not hold up the primary's exit.
      timer.unref();
      request.done = () => {
        clearTimeout(timer);
        resolve();
      };
      pending.set(requestId, request);
      for (const w of Object.values(cluster.workers ?? {})) {
        // A worker that exited abruptly may still be listed without a channel.
        if (!w?.isConnected()) continue;
        request.waiting.add(w.id);
        w.send(message);
      }
      if (request.waiting.size === 0) request.done();
    });
    pending.delete(requestId);
    return request.waiting.size + request.failed;
  };

  return {
    contentType: registry.contentType,
    metrics: async () => {
      const notAnswered = await gather();
      missing.set(notAnswered);
      if (notAnswered > 0) missed.inc(notAnswered);
      const figures = [...latest.values()];
      const workers =
        figures.length > 0 ? await AggregatorRegistry.aggregate(figures).metrics() : '';
      return `${workers}\n${await registry.metrics()}`;
    },
  };
}

/**
 * Makes a worker answer the primary's `/metrics` requests with `registry`'s metrics as JSON.
 */
export function answerMetricsRequests(registry: Registry): void {
  process.on('message', (m: unknown) => {
    if (!isMessage<MetricsRequest>(m, 'scylla-loader:metrics-request')) return;
    const reply = (body: Omit<MetricsReply, 'type' | 'requestId'>): void => {
      const message: MetricsReply = {
        type: 'scylla-loader:metrics-reply',
        requestId: m.requestId,
        ...body,
      };
      process.send?.(message);
    };
    registry.getMetricsAsJSON().then(
      (metrics) => reply({ metrics }),
      (err: unknown) => reply({ error: (err as Error).message }),
    );
  });
}
