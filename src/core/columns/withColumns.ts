import type { ByteBudget } from '../fetch/ByteBudget.js';
import type { BatchColumn } from './BatchColumn.js';

/** The most batches a stream reads columns for ahead of the one it sends. */
export const COLUMN_LOOKAHEAD = 8;

/** What {@link withColumns} needs of a batch: its samples' ids, sources and bytes. */
export interface ColumnBatch {
  samples: readonly { id: Buffer; source: number; data: Buffer; labelBlob?: Buffer | null }[];
}

/**
 * Passes `batches` through, each with its metadata columns (`read`), in order. A batch's
 * columns take a round trip to the database after the batch is assembled; to hide it the stage
 * takes further batches from `batches` and starts their reads while the first one's is still
 * in flight, up to {@link COLUMN_LOOKAHEAD} batches, and takes none ahead once the oldest
 * one's columns are in (a client slower than the database then holds one batch here, as
 * without columns). The bytes of the batches waiting here count in the process's `budget`
 * until they are handed on, so they pause other reads instead of adding to the process's
 * memory beyond it. Ending the iteration (or an error) ends `batches` too.
 */
export async function* withColumns<B extends ColumnBatch>(
  batches: AsyncIterable<B>,
  read: (batch: B) => Promise<BatchColumn[]>,
  budget: ByteBudget | undefined,
  lookahead = COLUMN_LOOKAHEAD,
): AsyncGenerator<{ batch: B; columns: BatchColumn[] }> {
  const upstream = batches[Symbol.asyncIterator]();
  interface Pending {
    batch: B;
    bytes: number;
    columns: Promise<BatchColumn[]>;
    done: boolean;
  }
  const queue: Pending[] = [];
  let ended = false;
  // At most one `next()` of `batches` is awaited at a time (see the race below).
  let taking: Promise<boolean> | undefined;
  const pull = async (): Promise<boolean> => {
    const next = await upstream.next();
    if (next.done === true) {
      ended = true;
      return false;
    }
    const batch = next.value;
    let bytes = 0;
    for (const s of batch.samples) bytes += s.data.length + (s.labelBlob?.length ?? 0);
    budget?.add(bytes);
    const pending: Pending = { batch, bytes, columns: read(batch), done: false };
    // A read failing while its batch waits is reported when the batch's turn comes.
    pending.columns.then(
      () => (pending.done = true),
      () => (pending.done = true),
    );
    queue.push(pending);
    return true;
  };
  const take = (): Promise<boolean> =>
    (taking ??= pull().finally(() => {
      taking = undefined;
    }));
  try {
    while (true) {
      if (queue.length === 0 && !(await take())) return;
      const head = queue[0]!;
      // Take batches ahead while the oldest one's columns are still on their way.
      while (!ended && !head.done && queue.length < lookahead) {
        const arrived = await Promise.race([
          head.columns.then(
            () => 'columns' as const,
            () => 'columns' as const,
          ),
          take().then(() => 'batch' as const),
        ]);
        if (arrived === 'columns') break;
      }
      const columns = await head.columns;
      queue.shift();
      budget?.add(-head.bytes);
      yield { batch: head.batch, columns };
    }
  } finally {
    const giveBack = (): void => {
      for (const p of queue) budget?.add(-p.bytes);
      queue.length = 0;
    };
    // The batches waiting here are given back before the wait for one being taken when the
    // caller left (its reads may wait on a slow database): other streams of the process
    // need not wait on it too. That one is given back once it arrives.
    giveBack();
    if (taking) await taking.catch(() => false);
    giveBack();
    await upstream.return?.(undefined);
  }
}
