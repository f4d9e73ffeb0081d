import { Counter, Gauge, type Registry } from 'prom-client';
import {
  type LoaderMetrics,
  type LoaderMetricsOptions,
  createLoaderMetrics,
} from '../../core/index.js';

/**
 * The metrics of RPC calls themselves, rather than of the data they move: streams open and how
 * they ended, time they waited for their clients, calls refused before their handler ran, the
 * tokens file's state.
 */
export interface RpcMetrics {
  /** StreamBatches and IngestSamples calls open now. */
  activeStreams: Gauge;
  /** Streams that ended with an error, by gRPC status name. */
  streamErrors: Counter<'code'>;
  /** Time streams spent waiting for slow clients to drain (backpressure). */
  clientBlockedSeconds: Counter;
  /**
   * Calls answered with an error before their handler ran (an undecodable body, no or an
   * unknown token, no grant), by method and gRPC status name.
   */
  callsRefused: Counter<'rpc' | 'code'>;
  /**
   * 1 while the tokens in force are not those of the tokens file on disk, because its last
   * read failed (missing, unreadable or invalid: the last good tokens stay in force); 0 when it
   * was read, or without a tokens file.
   */
  authTokensFileStale: Gauge;
  /** Reads of the tokens file that failed, each leaving the last good tokens in force. */
  authTokensReloadFailures: Counter;
}

/** Every metric a loader process exports: the core's and the RPC calls', on one registry. */
export type ServerMetrics = LoaderMetrics & RpcMetrics;

/** Creates the metrics of RPC calls on `registry` (the core's, shared). */
export function createRpcMetrics(registry: Registry): RpcMetrics {
  return {
    activeStreams: new Gauge({
      name: 'scylla_loader_active_streams',
      help: 'StreamBatches and IngestSamples calls currently open.',
      registers: [registry],
    }),
    streamErrors: new Counter({
      name: 'scylla_loader_stream_errors_total',
      help: 'Streams ended with an error, by gRPC status code name.',
      labelNames: ['code'],
      registers: [registry],
    }),
    clientBlockedSeconds: new Counter({
      name: 'scylla_loader_client_blocked_seconds_total',
      help: 'Time streams waited for slow clients to read (backpressure).',
      registers: [registry],
    }),
    callsRefused: new Counter({
      name: 'scylla_loader_calls_refused_total',
      help:
        'Calls answered before their handler ran, by method and gRPC status code name: ' +
        'INVALID_ARGUMENT (a request body that does not decode), UNAUTHENTICATED (no or an ' +
        'unknown token), PERMISSION_DENIED (a token without the grant).',
      labelNames: ['rpc', 'code'],
      registers: [registry],
    }),
    authTokensFileStale: new Gauge({
      name: 'scylla_loader_auth_tokens_file_stale',
      help:
        'Whether the tokens in force are not those of the tokens file, because its last read ' +
        'failed (missing, unreadable or invalid); the last good tokens stay in force.',
      // One stale worker is enough: its calls are authorized by an old file.
      aggregator: 'max',
      registers: [registry],
    }),
    authTokensReloadFailures: new Counter({
      name: 'scylla_loader_auth_tokens_reload_failures_total',
      help: 'Reads of the tokens file that failed, each leaving the last good tokens in force.',
      registers: [registry],
    }),
  };
}

/** Creates a loader process's metrics: the core's, with the process metrics, then the RPCs'. */
export function createServerMetrics(options: LoaderMetricsOptions = {}): ServerMetrics {
  const core = createLoaderMetrics(options);
  return { ...core, ...createRpcMetrics(core.registry) };
}
