import type cassandra from 'cassandra-driver';
import type { SourceCatalog } from './SourceCatalog.js';

/**
 * Which replica set owns each sample of a stream's sources, as a small number (equal numbers:
 * the same replicas of the same table, so one query can read them together: samples of two
 * splits of one dataset may share a group, samples of two datasets never), from the driver's
 * view of the ring. Worked out on first use of a sample and
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
    private readonly catalog: SourceCatalog,
  ) {
    this.setOf = new Int32Array(catalog.size).fill(-1);
  }

  /** The replica set of the sample stored at `storedPosition`. */
  of(storedPosition: number): number {
    const known = this.setOf[storedPosition]!;
    if (known >= 0) return known;
    const source = this.catalog.sourceOf(storedPosition);
    const id = this.catalog.idAt(storedPosition, source);
    // A uuid partition key is its 16 bytes: the routing key the driver hashes.
    const replicas = this.metadata.getReplicas(this.catalog.sources[source]!.keyspace, id) as
      { address: string }[] | null | undefined;
    const hosts = replicas?.length
      ? replicas
          .map((h) => h.address)
          .sort()
          .join(',')
      : '';
    const name = `${this.catalog.sources[source]!.keyspace}/${hosts}`;
    let n = this.setNumbers.get(name);
    if (n === undefined) {
      n = this.setNumbers.size;
      this.setNumbers.set(name, n);
    }
    this.setOf[storedPosition] = n;
    return n;
  }
}
