import type { FaultHistory } from './FaultHistory.js';
import type { Verdict } from './Verdict.js';

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
