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
 * worker for its registry over IPC and waits at most `timeoutMs`: the workers that answered
 * are summed (prom-client's `AggregatorRegistry.aggregate`, each metric by its own
 * aggregator), and `scylla_loader_metrics_workers_missing` says how many did not. prom-client's
 * own `clusterMetrics()` fails the whole scrape (HTTP 500) when one worker misses its fixed
 * 5 s: a scrape that fails hides exactly the overload it should show, so a scrape here always
 * answers. Replies that come after their scrape gave up are dropped.
 */
export function createClusterMetrics(options: {
  /** The primary's own registry (worker counts and restarts); the gauges are added to it. */
  registry: Registry;
  timeoutMs: number;
}): ClusterMetrics {
  const { registry, timeoutMs } = options;
  const missing = new Gauge({
    name: 'scylla_loader_metrics_workers_missing',
    help: 'Workers that did not answer the last /metrics scrape in time (their figures are left out of it)',
    registers: [registry],
  });
  const missed = new Counter({
    name: 'scylla_loader_metrics_worker_timeouts_total',
    help: 'Times a worker did not answer a /metrics scrape in time',
    registers: [registry],
  });
  let nextId = 0;
  const pending = new Map<
    number,
    { replies: WorkerMetrics[]; waiting: Set<number>; done: () => void }
  >();
  cluster.on('message', (worker, m: unknown) => {
    if (!isMessage<MetricsReply>(m, 'scylla-loader:metrics-reply')) return;
    const request = pending.get(m.requestId);
    if (!request || !request.waiting.delete(worker.id)) return;
    // A worker whose registry failed counts as missing: the gauge says so, not a 500.
    if (m.error === undefined && Array.isArray(m.metrics)) {
      request.replies.push(m.metrics as WorkerMetrics);
    }
    if (request.waiting.size === 0) request.done();
  });

  const gather = async (): Promise<{ replies: WorkerMetrics[]; notAnswered: number }> => {
    const requestId = nextId++;
    const replies: WorkerMetrics[] = [];
    const waiting = new Set<number>();
    const message: MetricsRequest = { type: 'scylla-loader:metrics-request', requestId };
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      pending.set(requestId, {
        replies,
        waiting,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      });
      for (const w of Object.values(cluster.workers ?? {})) {
        // A worker that exited abruptly may still be listed without a channel.
        if (!w?.isConnected()) continue;
        waiting.add(w.id);
        w.send(message);
      }
      if (waiting.size === 0) {
        clearTimeout(timer);
        resolve();
      }
    });
    pending.delete(requestId);
    const notAnswered =
      Object.values(cluster.workers ?? {}).filter(Boolean).length - replies.length;
    return { replies, notAnswered: Math.max(0, notAnswered) };
  };

  return {
    contentType: registry.contentType,
    metrics: async () => {
      const { replies, notAnswered } = await gather();
      missing.set(notAnswered);
      if (notAnswered > 0) missed.inc(notAnswered);
      const workers =
        replies.length > 0 ? await AggregatorRegistry.aggregate(replies).metrics() : '';
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
