/**
 * Splits positions into groups of at most `maxGroup` whose members share a replica set, so
 * each group can be read with one multi-partition query sent to a replica that owns every
 * member (the coordinator then reads them all locally, with no hop to another node).
 *
 * Groups keep the positions' order: a group is made of positions in the order they came, and
 * groups are listed in the order of their first member, so the lowest positions (those the
 * span waits for) leave first. A full group is closed and a new one of the same replica set
 * started. `replicaKeyOf` names a position's replica set; positions with equal keys share it.
 * With `maxGroup` 1 every position is its own group (one single-row read per sample).
 */
export function groupByReplica<K>(
  positions: readonly number[],
  replicaKeyOf: (position: number) => K,
  maxGroup: number,
): number[][] {
  if (!Number.isInteger(maxGroup) || maxGroup < 1) {
    throw new RangeError(`a read group holds at least 1 sample, not ${maxGroup}`);
  }
  if (maxGroup === 1) return positions.map((p) => [p]);
  const groups: number[][] = [];
  /** The group being filled for each replica set. */
  const open = new Map<K, number[]>();
  for (const position of positions) {
    const key = replicaKeyOf(position);
    let group = open.get(key);
    if (group === undefined || group.length >= maxGroup) {
      group = [];
      open.set(key, group);
      groups.push(group);
    }
    group.push(position);
  }
  return groups;
}
