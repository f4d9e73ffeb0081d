import type { ResumeState } from '../resume/resumeToken.js';

/**
 * Which positions of a rank's epoch were delivered (emitted in a batch): every position below
 * `low`, plus a set above it. The fetch engine never requests further than a bounded span
 * above `low`, so the set, and the resume token made from it, stay bounded.
 */
export class DeliveryTracker {
  private lowest: number;
  private readonly above = new Set<number>();

  constructor(state?: Pick<ResumeState, 'low' | 'deliveredAbove'>) {
    this.lowest = state?.low ?? 0;
    for (const p of state?.deliveredAbove ?? []) this.above.add(p);
    this.advance();
  }

  /** Lowest position not yet delivered. */
  get low(): number {
    return this.lowest;
  }

  /** Number of delivered positions. */
  get count(): number {
    return this.lowest + this.above.size;
  }

  isDelivered(position: number): boolean {
    return position < this.lowest || this.above.has(position);
  }

  markDelivered(position: number): void {
    if (position < this.lowest) return;
    this.above.add(position);
    this.advance();
  }

  /** Delivered positions above `low`, ascending (for the resume token). */
  deliveredAbove(): number[] {
    return [...this.above].sort((a, b) => a - b);
  }

  private advance(): void {
    while (this.above.delete(this.lowest)) this.lowest++;
  }
}
