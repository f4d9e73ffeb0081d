import { describe, expect, it } from 'vitest';
import { apportion } from '../../src/core/splits/apportion.js';
import { classTargets } from '../../src/core/splits/classTargets.js';

const available = new Map([
  [0, 7000],
  [1, 2000],
  [2, 1000],
]);

describe('apportion', () => {
  it('sums to the total and follows the weights', () => {
    expect(apportion(10, [7, 2, 1])).toEqual([7, 2, 1]);
    expect(apportion(11, [7, 2, 1])).toEqual([8, 2, 1]);
    expect(apportion(3, [1, 1, 1, 1])).toEqual([1, 1, 1, 0]);
    expect(apportion(5, [0, 0])).toEqual([0, 0]);
  });
});

describe('classTargets', () => {
  it('natural keeps everything; balanced takes the rarest count of each', () => {
    expect(classTargets(available, { mode: 'natural' })).toEqual(available);
    expect([...classTargets(available, { mode: 'balanced' }).values()]).toEqual([1000, 1000, 1000]);
  });

  it('ratios give the largest feasible totals in proportion', () => {
    const t = classTargets(available, { mode: 'ratios', ratios: { 0: 1, 1: 1 } });
    expect([...t]).toEqual([
      [0, 2000],
      [1, 2000],
    ]);
    const t2 = classTargets(available, { mode: 'ratios', ratios: { 0: 3, 2: 1 } });
    expect([...t2]).toEqual([
      [0, 3000],
      [2, 1000],
    ]);
  });

  it('scales down to maxTotal', () => {
    const t = classTargets(available, { mode: 'natural' }, 1000);
    expect([...t.values()]).toEqual([700, 200, 100]);
  });

  it('says which label is missing', () => {
    expect(() => classTargets(available, { mode: 'ratios', ratios: { 0: 1, 5: 1 } })).toThrow(
      /label 5 has no samples .* labels with samples: 0, 1, 2/,
    );
  });
});
