import type { ChannelOptions } from '@grpc/grpc-js';
import type { LoaderClientOptions } from './LoaderClientOptions.js';

const MiB = 1024 * 1024;

/** Default HTTP/2 flow-control window: 64 MiB (see `LoaderClientOptions.flowControlWindow`). */
export const DEFAULT_FLOW_CONTROL_WINDOW = 64 * MiB;

/** Default largest response: the server's 256 MiB batch limit plus 4 MiB of framing. */
export const DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH = 260 * MiB;

/**
 * The grpc-js channel options of a client: flow-control window, receive limit, keepalive,
 * and the channel's own reconnection backoff aligned with the SDK's, so that a call re-issued
 * after a restart is not refused for a second by a channel still backing off (grpc-js waits
 * 1 s, then up to 120 s, by default). `options.channelOptions` override all of them.
 *
 * @internal
 */
export function channelOptions(options: LoaderClientOptions): ChannelOptions {
  const keepalive = options.keepalive ?? {};
  const reconnect = options.reconnect ?? {};
  return {
    'grpc-node.flow_control_window': options.flowControlWindow ?? DEFAULT_FLOW_CONTROL_WINDOW,
    'grpc.max_receive_message_length':
      options.maxReceiveMessageLength ?? DEFAULT_MAX_RECEIVE_MESSAGE_LENGTH,
    'grpc.keepalive_time_ms': keepalive.timeMs ?? 30_000,
    'grpc.keepalive_timeout_ms': keepalive.timeoutMs ?? 10_000,
    'grpc.keepalive_permit_without_calls': keepalive.permitWithoutCalls ? 1 : 0,
    'grpc.initial_reconnect_backoff_ms': reconnect.initialBackoffMs ?? 100,
    'grpc.max_reconnect_backoff_ms': reconnect.maxBackoffMs ?? 5_000,
    ...(options.tls !== undefined && options.tls !== true && options.tls.serverName !== undefined
      ? { 'grpc.ssl_target_name_override': options.tls.serverName }
      : {}),
    ...options.channelOptions,
  };
}
