import { describe, expect, it } from 'vitest';
import { parseExtraPaths } from '../../src/cli/parseExtraPaths.js';

describe('parseExtraPaths', () => {
  it('reads name=hosts with an optional port for the whole path, several split by ;', () => {
    expect(parseExtraPaths('route2=10.0.1.5,10.0.1.6:9043; lan = db1 ;')).toEqual([
      { name: 'route2', contactPoints: ['10.0.1.5', '10.0.1.6'], port: 9043 },
      { name: 'lan', contactPoints: ['db1'] },
    ]);
  });

  it('takes IPv6 hosts in brackets and refuses bare ones', () => {
    expect(parseExtraPaths('v6=[fd00::1],[fd00::2]:9042')).toEqual([
      { name: 'v6', contactPoints: ['fd00::1', 'fd00::2'], port: 9042 },
    ]);
    expect(() => parseExtraPaths('v6=fd00::1')).toThrow(/IPv6 goes in brackets/);
  });

  it('says what form to use when the name or the hosts are missing', () => {
    expect(() => parseExtraPaths('10.0.1.5')).toThrow(/missing name=.*name=host1,host2\[:port\]/);
    expect(() => parseExtraPaths('r=')).toThrow(/no hosts/);
    expect(() => parseExtraPaths('r=:9042')).toThrow(/extra path "r=:9042"/);
  });
});
