/** One source a stream reads from: a dataset (keyspace) and the ids of its split. */
export interface FetchSource {
  keyspace: string;
  /** The split's ids, 16 bytes each, in stored order. */
  ids: Buffer;
}

/**
 * The sources of a stream laid end to end: stored position g is the sample at g - offset(s)
 * of source s, the source whose range holds g. A single-source stream is the common case and
 * takes no search; a mixture finds the source by binary search over at most 64 offsets,
 * without copying the ids into one buffer.
 */
export class SourceCatalog {
  /** First stored position of each source, and one past the last source's. */
  private readonly starts: number[];

  constructor(readonly sources: readonly FetchSource[]) {
    if (sources.length === 0) throw new RangeError('a stream reads at least one source');
    this.starts = [0];
    for (const s of sources) this.starts.push(this.starts.at(-1)! + s.ids.length / 16);
  }

  /** Stored positions of all sources together. */
  get size(): number {
    return this.starts.at(-1)!;
  }

  /** The index of the source holding stored position `g`. */
  sourceOf(g: number): number {
    if (this.sources.length === 1) return 0;
    let lo = 0;
    let hi = this.sources.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= g) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The id of the sample at stored position `g` (a view into its source's ids). */
  idAt(g: number, source = this.sourceOf(g)): Buffer {
    const local = g - this.starts[source]!;
    return this.sources[source]!.ids.subarray(local * 16, local * 16 + 16);
  }
}
