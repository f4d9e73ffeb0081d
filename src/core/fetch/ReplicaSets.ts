import type cassandra from 'cassandra-driver';

/**
 * Which replica set owns each sample of a split, as a small number (equal numbers: the same
 * replicas), from the driver's view of the ring. Worked out on first use of a sample and
 * remembered (4 bytes per sample of the split), so the hash of an id is computed once per
 * stream, not once per epoch.
 *
 * Without ring metadata (the driver has none yet, or the keyspace is unknown to it) every
 * sample gets the same set: grouping then ignores replicas and the coordinator forwards what
 * it does not own, which is still correct.
 */
export class ReplicaSets {
  private readonly setOf: Int32Array;
  private readonly setNumbers = new Map<string, number>();

  constructor(
    private readonly metadata: Pick<cassandra.metadata.Metadata, 'getReplicas'>,
    private readonly keyspace: string,
    /** The split's ids, 16 bytes each, in stored order. */
    private readonly ids: Buffer,
  ) {
    this.setOf = new Int32Array(ids.length / 16).fill(-1);
  }

  /** The replica set of the sample stored at `storedPosition`. */
  of(storedPosition: number): number {
    const known = this.setOf[storedPosition]!;
    if (known >= 0) return known;
    const id = this.ids.subarray(storedPosition * 16, storedPosition * 16 + 16);
    // A uuid partition key is its 16 bytes: the routing key the driver hashes.
    const replicas = this.metadata.getReplicas(this.keyspace, id) as
      { address: string }[] | null | undefined;
    const name = replicas?.length
      ? replicas
          .map((h) => h.address)
          .sort()
          .join(',')
      : '';
    let n = this.setNumbers.get(name);
    if (n === undefined) {
      n = this.setNumbers.size;
      this.setNumbers.set(name, n);
    }
    this.setOf[storedPosition] = n;
    return n;
  }
}
