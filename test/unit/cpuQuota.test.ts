import { describe, expect, it } from 'vitest';
import {
  cpuQuotaFrom,
  defaultTransformSlots,
  threadPoolSizeFor,
} from '../../src/core/transform/cpuQuota.js';

describe('cpuQuotaFrom', () => {
  it('reads a cgroup v2 quota, capped by the CPUs the process may run on', () => {
    expect(cpuQuotaFrom({ cpuMax: '150000 100000\n' }, 8)).toBe(1.5);
    expect(cpuQuotaFrom({ cpuMax: '800000 100000' }, 2)).toBe(2);
    expect(cpuQuotaFrom({ cpuMax: 'max 100000' }, 6)).toBe(6);
  });

  it('falls back to the cgroup v1 CFS quota; -1 means none', () => {
    expect(cpuQuotaFrom({ cfsQuotaUs: '250000', cfsPeriodUs: '100000' }, 16)).toBe(2.5);
    expect(cpuQuotaFrom({ cfsQuotaUs: '-1', cfsPeriodUs: '100000' }, 4)).toBe(4);
    expect(cpuQuotaFrom({}, 3)).toBe(3);
  });

  it('one transform slot per quota CPU, rounded up; the pool two threads more, at least 4', () => {
    expect([0.5, 1, 1.5, 2, 7.01].map(defaultTransformSlots)).toEqual([1, 1, 2, 2, 8]);
    expect([1, 2, 3, 16].map(threadPoolSizeFor)).toEqual([4, 4, 5, 18]);
  });
});
