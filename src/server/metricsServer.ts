import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where `/metrics` comes from: a prom-client Registry, or the cluster's aggregate. */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** Settings of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  registry: MetricsSource;
  /** False once shutdown began, so `/healthz` tells load balancers to stop sending work. */
  isServing: () => boolean;
  /** Why `/healthz` says 503 (default: shutting down). */
  notServingReason?: () => string;
  /**
   * Lines `/healthz` adds after `ok`: how this loader is configured where it matters, and
   * conditions worth a person's attention that do not stop it serving. A function is asked
   * on every request and adds no line when it returns undefined.
   */
  details?: readonly (string | (() => string | undefined))[];
}

/** A running metrics server. */
export interface MetricsServer {
  /** Port it listens on (the free one picked for port 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `/metrics` (Prometheus text from the loader's registry, or all workers' together) and `/healthz` on a plain
 * HTTP port of its own: scrapers and HTTP probes cannot speak gRPC, and a separate port keeps
 * them away from the data path.
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const { registry, isServing } = options;
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: unknown) =>
          res
            .writeHead(500, { 'content-type': 'text/plain' })
            .end(`metrics failed: ${String(err)}\n`),
      );
    } else if (path === '/healthz') {
      const serving = isServing();
      res
        .writeHead(serving ? 200 : 503, { 'content-type': 'text/plain' })
        .end(
          serving
            ? ['ok', ...healthDetails(options.details)].map((line) => `${line}\n`).join('')
            : `${options.notServingReason?.() ?? 'shutting down'}\n`,
        );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found; try /metrics\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's keep-alive connection would hold close() open until it times out.
        server.closeAllConnections();
      }),
  };
}

function healthDetails(details: MetricsServerOptions['details']): string[] {
  const lines: string[] = [];
  for (const d of details ?? []) {
    const line = typeof d === 'function' ? d() : d;
    if (line !== undefined) lines.push(line);
  }
  return lines;
}
