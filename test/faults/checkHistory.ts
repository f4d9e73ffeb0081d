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
  /**
   * Calls that ended with a status other than OK, each followed by a new call with the last
   * resume token: the status code (`IDLE` or `CONNECT` when the checker ended the call itself:
   * no batch for too long, no connection after a second), ms since the history began, details.
   */
  reconnects: { rank: number; code: string; atMs: number; details: string }[];
  /** Ranks that stopped for good, with why (a status not worth retrying, or out of time). */
  failures: { rank: number; code: string; details: string }[];
}

/** An empty {@link FaultHistory}. @internal */
export function emptyHistory(): FaultHistory {
  return { deliveries: {}, waits: [], firstBatchMs: {}, reconnects: [], failures: [] };
}

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

/** What a history is checked against. @internal */
export interface CheckExpectation {
  /** The split's sample ids (32 hex digits), as read from the database. */
  splitIds: Iterable<string>;
  /** First epoch streamed. */
  firstEpoch: number;
  /** Epochs streamed from it. */
  epochs: number;
}

/**
 * Checks a run's history against the split: with the `uneven` shard rule the ranks of an epoch
 * partition the split exactly, so each epoch's deliveries, pooled over the ranks, must be the
 * split's ids, each exactly once. Counts what was lost, repeated (within a rank or across
 * ranks) and foreign, and sums up the stalls and reconnects. Pure: the same history gives the
 * same verdict.
 *
 * @internal
 */
export function checkHistory(history: FaultHistory, expect: CheckExpectation): Verdict {
  const split = new Set(expect.splitIds);
  const byEpoch = new Map<number, string[][]>();
  let outOfRange = 0;
  let delivered = 0;
  for (const [key, ids] of Object.entries(history.deliveries)) {
    const epoch = Number(key.slice(0, key.indexOf('/')));
    delivered += ids.length;
    if (epoch < expect.firstEpoch || epoch >= expect.firstEpoch + expect.epochs) {
      outOfRange += ids.length;
      continue;
    }
    const lists = byEpoch.get(epoch) ?? [];
    lists.push(ids);
    byEpoch.set(epoch, lists);
  }

  let lost = 0;
  let duplicated = 0;
  let foreign = 0;
  for (let epoch = expect.firstEpoch; epoch < expect.firstEpoch + expect.epochs; epoch++) {
    const seen = new Set<string>();
    for (const ids of byEpoch.get(epoch) ?? []) {
      for (const id of ids) {
        if (!split.has(id)) foreign++;
        else if (seen.has(id)) duplicated++;
        else seen.add(id);
      }
    }
    lost += split.size - seen.size;
  }

  const reconnectsByCode: Record<string, number> = {};
  for (const r of history.reconnects) {
    reconnectsByCode[r.code] = (reconnectsByCode[r.code] ?? 0) + 1;
  }
  const failedRanks = new Set(history.failures.map((f) => f.rank)).size;
  return {
    epochs: expect.epochs,
    expectedPerEpoch: split.size,
    delivered,
    lost,
    duplicated,
    foreign,
    outOfRange,
    longestStallMs: history.waits.reduce((max, w) => Math.max(max, w.ms), 0),
    reconnects: history.reconnects.length,
    reconnectsByCode,
    failedRanks,
    ok: lost === 0 && duplicated === 0 && foreign === 0 && outOfRange === 0 && failedRanks === 0,
  };
}
