import type { ServerInterceptor, ServerOptions } from '@grpc/grpc-js';
import { MAX_REQUEST_BYTES } from './limits/requestLimits.js';
import type { ServerConfig } from './config/serverConfig.js';

/**
 * Largest request accepted, server-wide: IngestSamples's 32 MiB. Each call gets its own
 * method's smaller limit from `messageLimitInterceptor` (see `requestLimits.ts`).
 */
export const MAX_RECEIVE_MESSAGE_BYTES = MAX_REQUEST_BYTES;

/**
 * HTTP/2 flow-control window asked for (stream and connection); the loader's own receive
 * window too, raised on every connection by `raiseReceiveWindow` for the requests.
 */
export const FLOW_CONTROL_WINDOW_BYTES = 64 * 1024 * 1024;

/**
 * Options of the loader's `grpc.Server`.
 *
 * The flow-control window bounds one stream's rate to about window / round-trip time (the
 * 64 KiB default caps a stream near 0.45 GB/s even on loopback). Batches flow from server to
 * client, so it is the window the client advertises that counts: the client must set
 * `grpc-node.flow_control_window` too. grpc-js 1.14 reads it only on client channels, so the
 * loader's own window, which IngestSamples uploads need, is raised after binding
 * (`raiseReceiveWindow`); it is set here as well for grpc-js versions that honour it.
 *
 * Keepalive pings find dead trainers behind NATs and load balancers that drop idle
 * connections silently. grpc-js servers do not police client pings, so the permit and
 * minimum-interval settings only document what clients may do.
 *
 * `interceptors` run on every call before its handler, in order (the first is handed grpc-js's
 * own call); `grpc.max_concurrent_streams` is sent to clients in SETTINGS, so one connection
 * cannot hold more calls than that at once.
 */
export function grpcServerOptions(
  config: ServerConfig,
  interceptors: ServerInterceptor[] = [],
): ServerOptions {
  return {
    interceptors,
    'grpc.max_concurrent_streams': config.maxCallsPerConnection,
    'grpc.max_send_message_length': config.maxMessageBytes,
    'grpc.max_receive_message_length': MAX_RECEIVE_MESSAGE_BYTES,
    'grpc.keepalive_time_ms': config.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': config.keepaliveTimeoutMs,
    'grpc.keepalive_permit_without_calls': 1,
    'grpc.http2.min_ping_interval_without_data_ms': 10_000,
    'grpc-node.flow_control_window': FLOW_CONTROL_WINDOW_BYTES,
  };
}
