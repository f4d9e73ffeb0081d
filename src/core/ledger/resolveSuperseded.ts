/** What {@link resolveSuperseded} needs of a batch row. */
export interface VersionedBatch {
  epoch: number;
  rank: number;
  index: number;
  worldSize: number;
  segment: Buffer;
  /** The sending stream's start (comparable; later streams are larger). */
  streamTime: bigint;
  streamId: string;
  sentAt: Date;
  superseded: boolean;
  /** Left out by a skip: neither live nor superseded, and not in the competition. */
  skipped?: boolean;
}

/**
 * Which rows of a batch index are live. A stream that starts from a point marks the rows after
 * it superseded, but a row the stream it replaced was still writing can land after that pass
 * (a connection lost with a write in flight). So of the rows of one batch (epoch, rank, index,
 * world size and segment) not marked superseded, only the one sent by the latest stream is
 * live: the trainer's timeline is the latest stream's. Returns the rows (copies where changed)
 * sorted by epoch, rank, index and send time.
 */
export function resolveSuperseded<T extends VersionedBatch>(rows: readonly T[]): T[] {
  const latest = new Map<string, T>();
  for (const row of rows) {
    if (row.superseded || row.skipped === true) continue;
    const key = `${row.epoch}/${row.rank}/${row.index}/${row.worldSize}/${row.segment.toString('hex')}`;
    const held = latest.get(key);
    if (held === undefined || later(row, held)) latest.set(key, row);
  }
  const live = new Set(latest.values());
  return rows
    .map((row) =>
      row.superseded || row.skipped === true || live.has(row) ? row : { ...row, superseded: true },
    )
    .sort(
      (a, b) =>
        a.epoch - b.epoch ||
        a.rank - b.rank ||
        a.index - b.index ||
        a.sentAt.getTime() - b.sentAt.getTime(),
    );
}

function later(a: VersionedBatch, b: VersionedBatch): boolean {
  return a.streamTime !== b.streamTime ? a.streamTime > b.streamTime : a.streamId > b.streamId;
}
