/**
 * One reconnect of a rank's stream: the call ended with a status other than OK (or the checker
 * gave up waiting on it), and a new call with the last resume token followed or was tried.
 *
 * @internal
 */
export interface ReconnectRecord {
  rank: number;
  /**
   * gRPC status code of the ended call; `IDLE` or `CONNECT` when the checker ended it itself
   * (no batch for too long, or no connection after a second).
   */
  code: string;
  /** Milliseconds since the history began. */
  atMs: number;
  /** The status details, for a person reading the report. */
  details: string;
}

/**
 * What the trainers saw during a run, as the fault checker's own client recorded it: every
 * sample id delivered per (epoch, rank), every wait between two batches, every reconnect. It
 * is plain data (JSON-able), so a run can be saved and checked again later.
 *
 * @internal
 */
export interface FaultHistory {
  /** Sample ids (32 hex digits) in arrival order, keyed `<epoch>/<rank>`. */
  deliveries: Record<string, string[]>;
  /**
   * Milliseconds each rank's trainer waited for its next batch: from the end of its step on
   * the previous batch to the arrival of the next, reconnects included. A rank's first batch
   * is not a wait between batches (it is in `firstBatchMs`).
   */
  waits: { rank: number; epoch: number; atMs: number; ms: number }[];
  /** Milliseconds from each rank's first call to its first batch. */
  firstBatchMs: Record<string, number>;
  reconnects: ReconnectRecord[];
  /** Ranks that stopped for good, with why (a status not worth retrying, or out of time). */
  failures: { rank: number; code: string; details: string }[];
}

/** An empty {@link FaultHistory}. @internal */
export function emptyHistory(): FaultHistory {
  return { deliveries: {}, waits: [], firstBatchMs: {}, reconnects: [], failures: [] };
}
