import { describe, expect, it } from 'vitest';
import { groupByReplica } from '../../src/core/fetch/groupByReplica.js';
import { groupReadSize } from '../../src/core/fetch/groupReadSize.js';
import { ReplicaSets } from '../../src/core/fetch/ReplicaSets.js';
import { SourceCatalog } from '../../src/core/fetch/SourceCatalog.js';
import { streamLimitsSchema } from '../../src/core/config/streamLimits.js';

describe('groupByReplica', () => {
  const setOf = (p: number): string => ['a', 'b', 'c'][p % 3]!;

  it('puts only positions of one replica set in a group, each position once', () => {
    const positions = Array.from({ length: 100 }, (_, i) => i);
    const groups = groupByReplica(positions, setOf, 8);
    expect(groups.flat().sort((x, y) => x - y)).toEqual(positions);
    for (const g of groups) {
      expect(g.length).toBeGreaterThan(0);
      expect(g.length).toBeLessThanOrEqual(8);
      expect(new Set(g.map(setOf)).size).toBe(1);
    }
    // 34, 33 and 33 positions per set: ceil(n / 8) groups each, no more.
    expect(groups).toHaveLength(5 + 5 + 5);
  });

  it('keeps the order: members in arrival order, groups by their first member', () => {
    const groups = groupByReplica([7, 1, 4, 2, 5, 8, 3], (p) => p % 2, 2);
    expect(groups).toEqual([[7, 1], [4, 2], [5, 3], [8]]);
    expect(groups.map((g) => g[0])).toEqual([7, 4, 5, 8]);
  });

  it('one set and room for all: a single group', () => {
    expect(groupByReplica([3, 9, 1], () => 0, 32)).toEqual([[3, 9, 1]]);
  });

  it('a group size of 1 is one single read per position; 0 is refused', () => {
    expect(groupByReplica([5, 6], setOf, 1)).toEqual([[5], [6]]);
    expect(groupByReplica([], setOf, 4)).toEqual([]);
    expect(() => groupByReplica([1], setOf, 0)).toThrow(/at least 1/);
  });
});

describe('groupReadSize', () => {
  const limits = streamLimitsSchema.parse({});

  it('auto groups datasets whose mean sample is at most the threshold, and only those', () => {
    expect(limits.groupReads).toBe('auto');
    expect(groupReadSize(limits, 500)).toBe(limits.groupReadsSize);
    expect(groupReadSize(limits, limits.groupReadsMaxBytes)).toBe(limits.groupReadsSize);
    expect(groupReadSize(limits, limits.groupReadsMaxBytes + 1)).toBe(1);
    expect(groupReadSize(limits, 110_000)).toBe(1);
    // Unknown size (nothing recorded): single reads.
    expect(groupReadSize(limits, undefined)).toBe(1);
    expect(groupReadSize(limits, 0)).toBe(1);
  });

  it('on and off ignore the size', () => {
    expect(groupReadSize({ ...limits, groupReads: 'on', groupReadsSize: 8 }, 1e6)).toBe(8);
    expect(groupReadSize({ ...limits, groupReads: 'off' }, 10)).toBe(1);
  });

  it('the schema refuses a group of one and an unknown mode', () => {
    expect(() => streamLimitsSchema.parse({ groupReadsSize: 1 })).toThrow();
    expect(() => streamLimitsSchema.parse({ groupReads: 'always' })).toThrow();
  });
});

describe('ReplicaSets', () => {
  const ids = Buffer.alloc(16 * 6);
  for (let i = 0; i < 6; i++) ids[i * 16] = i;

  it('numbers replica sets by their hosts, whatever their order, asking once per sample', () => {
    let asked = 0;
    const metadata = {
      getReplicas: (_ks: string, key: unknown) => {
        asked++;
        const first = (key as Buffer)[0]!;
        return first % 2 === 0
          ? [{ address: '10.0.0.1:9042' }, { address: '10.0.0.2:9042' }]
          : [
              { address: '10.0.0.2:9042' },
              { address: '10.0.0.1:9042' },
              { address: '10.0.0.3:9042' },
            ];
      },
    };
    const sets = new ReplicaSets(metadata as never, new SourceCatalog([{ keyspace: 'ks', ids }]));
    const got = [0, 1, 2, 3, 4, 5].map((p) => sets.of(p));
    expect(got).toEqual([0, 1, 0, 1, 0, 1]);
    expect(sets.of(4)).toBe(0);
    expect(asked).toBe(6);
  });

  it('without ring metadata every sample shares one set', () => {
    const sets = new ReplicaSets(
      { getReplicas: () => null } as never,
      new SourceCatalog([{ keyspace: 'ks', ids }]),
    );
    expect(new Set([0, 1, 2, 3, 4, 5].map((p) => sets.of(p))).size).toBe(1);
  });
});
