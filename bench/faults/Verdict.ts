/**
 * The fault checker's judgement of one run: what was lost, repeated or foreign against the
 * split read from the database, and what the trainers went through.
 *
 * @internal
 */
export interface Verdict {
  /** Epochs checked. */
  epochs: number;
  /** The split's samples, i.e. what every epoch must deliver across the ranks. */
  expectedPerEpoch: number;
  /** Samples delivered, repeats and foreign ids included. */
  delivered: number;
  /** Split ids of an epoch that no rank received. */
  lost: number;
  /** Deliveries of an id already delivered in the same epoch (by any rank). */
  duplicated: number;
  /** Deliveries of ids that are not in the split. */
  foreign: number;
  /** Deliveries recorded for an epoch outside the range asked for. */
  outOfRange: number;
  /** Longest wait of a trainer between two batches, ms. */
  longestStallMs: number;
  reconnects: number;
  /** Reconnects by the status code that ended the call. */
  reconnectsByCode: Record<string, number>;
  /** Ranks that gave up (a status not worth retrying, or out of time). */
  failedRanks: number;
  /** Nothing lost, repeated, foreign or out of range, and no rank gave up. */
  ok: boolean;
}
