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
