import { describe, expect, it } from 'vitest';
import { parseReplication, replicationCql } from '../../src/core/schema/replication.js';

describe('parseReplication', () => {
  it('parses simple and nts forms into CQL', () => {
    expect(replicationCql(parseReplication('simple:1'))).toBe(
      "{'class': 'SimpleStrategy', 'replication_factor': 1}",
    );
    expect(replicationCql(parseReplication('nts:dc1=3,dc2=2'))).toBe(
      "{'class': 'NetworkTopologyStrategy', 'dc1': 3, 'dc2': 2}",
    );
  });

  it.each(['simple:0', 'simple:x', 'nts:', "nts:dc'1=3", 'other:1', 'simple:99'])(
    'rejects %s',
    (text) => {
      expect(() => parseReplication(text)).toThrow(/invalid replication/);
    },
  );
});
