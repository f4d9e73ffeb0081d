import type { AssembledBatch } from '../fetch/AssembledBatch.js';
import type { PermutationArgs, PermutationCache } from '../sampling/createPermutationCache.js';

/** What a stream's {@link epochOrders} are made from. */
export interface EpochOrdersOptions {
  /** The process's shared orders. */
  permutations: PermutationCache;
  /** An epoch's entry in `permutations`: its key and what it is made from. */
  orderOf(epoch: number): { key: string; args: PermutationArgs };
  /** Whether the stream needs an epoch's order (an epoch it reads shuffled, with positions). */
  needed(epoch: number): boolean;
  /** The call's cancellation: the stream stops waiting, and shared work nobody needs stops. */
  signal?: AbortSignal;
}

/** One stream's epoch orders, made ahead of the fetch engine, off the event loop. */
export interface EpochOrders {
  /** Whether the stream needs epoch `epoch`'s order. */
  needed(epoch: number): boolean;
  /** Has epoch `epoch`'s order made (shared with other streams) and kept for {@link permute}. */
  ready(epoch: number): Promise<void>;
  /**
   * Epoch `epoch`'s order, as `epochShard` asks for it (synchronously, as the engine starts the
   * epoch): the one made ahead, else made on the spot.
   */
  permute(n: number, seed: bigint, epoch: number): Uint32Array;
  /** See `StreamPlan.readyAhead`. */
  readyAhead(batches: AsyncIterable<AssembledBatch>): AsyncGenerator<AssembledBatch>;
}

/**
 * A stream's epoch orders. The fetch engine asks for an epoch's order synchronously when it
 * starts the epoch, so a large one must be made before: the first by `planStream`
 * ({@link EpochOrders.ready}), each next one while the epoch before it streams
 * ({@link EpochOrders.readyAhead}). The stream keeps its current and next epochs' orders (the
 * cache may drop them, or never hold one larger than its bound); earlier ones are let go.
 */
export function epochOrders(options: EpochOrdersOptions): EpochOrders {
  const { permutations, orderOf, needed, signal } = options;
  const made = new Map<number, Uint32Array>();
  const making = new Map<number, Promise<void>>();

  const ready = (epoch: number): Promise<void> => {
    if (made.has(epoch) || !needed(epoch)) return Promise.resolve();
    let pending = making.get(epoch);
    if (!pending) {
      const { key, args } = orderOf(epoch);
      pending = permutations
        .lookup(key, args, { signal })
        .then((order) => {
          made.set(epoch, order);
        })
        .finally(() => making.delete(epoch));
      making.set(epoch, pending);
    }
    return pending;
  };

  const permute = (_n: number, _seed: bigint, epoch: number): Uint32Array => {
    for (const e of made.keys()) if (e < epoch) made.delete(e);
    const order = made.get(epoch);
    if (order) return order;
    // Not made ahead: only an epoch the stream reached without a batch of the one before it
    // (its positions all skipped) gets here.
    const { key, args } = orderOf(epoch);
    return permutations.memo(key, { context: args });
  };

  async function* readyAhead(
    batches: AsyncIterable<AssembledBatch>,
  ): AsyncGenerator<AssembledBatch> {
    for await (const batch of batches) {
      const ahead = ready(batch.epoch + 1);
      ahead.catch(() => undefined); // awaited at the epoch's end
      yield batch;
      // The engine starts the next epoch as soon as it is asked for another batch.
      if (batch.lastInEpoch) await ahead;
    }
  }

  return { needed, ready, permute, readyAhead };
}
