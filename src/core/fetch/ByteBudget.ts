/**
 * The bytes of fetched samples a process holds for its streams (arrived or being transformed,
 * not yet sent), against a budget: when the streams together hold `limit` bytes, each stream
 * pauses its reads (beyond the one batch it may always complete) until sends bring the total
 * down, so a burst of streams slows down instead of taking the process's memory.
 *
 * One per process, shared by its streams; every stream that takes bytes gives them back when
 * its batches are sent or it ends.
 */
export class ByteBudget {
  private heldBytes = 0;

  /**
   * @param limit Bytes the streams may hold together before they pause their reads.
   * @param gauge Set to the bytes held at every change (`scylla_loader_held_bytes`).
   */
  constructor(
    readonly limit: number,
    private readonly gauge?: { set(value: number): void },
  ) {}

  /** Bytes held now by every stream of the process. */
  get held(): number {
    return this.heldBytes;
  }

  /** True while the streams hold the whole budget or more: reads beyond a batch wait. */
  get exhausted(): boolean {
    return this.heldBytes >= this.limit;
  }

  /** Counts `bytes` more held (negative: given back). */
  add(bytes: number): void {
    this.heldBytes = Math.max(0, this.heldBytes + bytes);
    this.gauge?.set(this.heldBytes);
  }
}
