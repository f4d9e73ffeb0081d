import type { ChannelCredentials, ChannelOptions } from '@grpc/grpc-js';
import type { ClientTlsOptions, TokenSource } from './ClientTlsOptions.js';

/** How a broken stream is resumed (see {@link LoaderClient.streamBatches}). */
export interface ReconnectOptions {
  /**
   * Reconnection attempts in a row without receiving a batch before the stream fails with
   * the last error; a received batch resets the count. 0 turns reconnection off. Default 10.
   */
  attempts?: number;
  /** Delay before the first attempt, doubled for each further one (with jitter). Default 100. */
  initialBackoffMs?: number;
  /** Cap of the delay between attempts. Default 5000. */
  maxBackoffMs?: number;
  /**
   * Also resume after RESOURCE_EXHAUSTED, which a loader returns when it already serves as
   * many streams as it admits (it frees up when other streams end). Default true.
   */
  retryOnResourceExhausted?: boolean;
}

/** HTTP/2 keepalive pings, which detect a connection that died without a word (a lost host). */
export interface KeepaliveOptions {
  /** Interval between pings. Default 30,000. */
  timeMs?: number;
  /** How long to wait for a ping's answer before the connection counts as dead. Default 10,000. */
  timeoutMs?: number;
  /** Ping also while no call is active. Default false. */
  permitWithoutCalls?: boolean;
}

/** Options of a {@link LoaderClient}. */
export interface LoaderClientOptions {
  /**
   * Channel credentials, for what {@link tls} does not cover; not together with `tls`.
   * Default: insecure (plain-text HTTP/2).
   */
  credentials?: ChannelCredentials;
  /**
   * TLS to the server: `true` for TLS verified against the system's roots, or a CA, a client
   * certificate and key (mTLS) and the name to verify. Default: plain text.
   */
  tls?: ClientTlsOptions | true;
  /**
   * Bearer token sent as `authorization: Bearer <token>` with every call, for a loader run
   * with a tokens file: the token, or a function called before each call (and each
   * reconnection of a stream), so the token may rotate. Over plain text the token travels in
   * the clear: use TLS, or a TLS-terminating mesh or proxy. Default: none.
   */
  token?: TokenSource;
  /**
   * HTTP/2 flow-control window in bytes (channel option `grpc-node.flow_control_window`),
   * for each stream and for the connection: how much the server may send before the client
   * acknowledges. A stream's rate is at most window / round-trip time, so the window must be
   * at least bandwidth x RTT: 1 GB/s over a 20 ms link needs 20 MB. grpc-js's default of
   * 64 KiB allows about 3 MB/s over 20 ms, and even over loopback capped a stream of 12.8 MB
   * messages at 0.41-0.47 GB/s against ~1 GB/s with 64 MiB. Up to this many bytes per
   * connection may sit in the client's memory when the trainer is slower than the stream.
   * Default 64 MiB.
   */
  flowControlWindow?: number;
  /**
   * Largest response accepted, in bytes. Default 256 MiB (the server's limit for one batch)
   * plus 4 MiB for ids, labels, sizes and the token.
   */
  maxReceiveMessageLength?: number;
  /**
   * Decoded responses a stream holds while the trainer has not asked for them: when this many
   * wait, the client stops reading and HTTP/2 flow control pauses the server. Default 2.
   */
  maxBufferedBatches?: number;
  /**
   * Connections streams are spread over, round robin (default 8; 1: every stream on the one
   * channel unary calls use). A loader run with `serve --workers N` keeps each connection on
   * one worker, so the streams of one client (the ranks of a job on one host) reach several
   * workers only over several connections. Each is opened at its first stream.
   */
  streamChannels?: number;
  /** Keepalive pings. */
  keepalive?: KeepaliveOptions;
  /** Resumption of broken streams. */
  reconnect?: ReconnectOptions;
  /** Further grpc-js channel options; they override the ones set from the fields above. */
  channelOptions?: ChannelOptions;
}
