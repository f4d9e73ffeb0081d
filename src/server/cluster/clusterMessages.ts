/** IPC messages between the primary of `serve --workers N` and its workers. */

/** Worker to primary: its loader serves gRPC on `port`. */
export interface WorkerListening {
  type: 'scylla-loader:listening';
  port: number;
}

/** Primary to workers: whether every worker serves (health says NOT_SERVING otherwise). */
export interface ClusterHealth {
  type: 'scylla-loader:health';
  serving: boolean;
}

/** True for a message of the given type (IPC messages are untyped). */
export function isMessage<T extends { type: string }>(m: unknown, type: T['type']): m is T {
  return typeof m === 'object' && m !== null && (m as { type?: unknown }).type === type;
}

/** Primary to a worker: send your registry's metrics as JSON, tagged with `requestId`. */
export interface MetricsRequest {
  type: 'scylla-loader:metrics-request';
  requestId: number;
}

/** Worker to primary: its registry (`Registry.getMetricsAsJSON()`), or why it could not. */
export interface MetricsReply {
  type: 'scylla-loader:metrics-reply';
  requestId: number;
  metrics?: unknown[];
  error?: string;
}
