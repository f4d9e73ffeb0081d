import { describe, expect, it } from 'vitest';
import { assignSplits, type SplitResult } from '../../src/core/splits/assignSplits.js';
import type { SplitInput } from '../../src/core/splits/SplitInput.js';
import type { SplitSpec } from '../../src/core/splits/SplitSpec.js';
import { splitsFlagOf } from '../../src/cli/commands/splits.js';
import { requestFieldOf } from '../../src/server/rpc/requestFieldOf.js';
import { syntheticPathology, toSplitInput } from '../support/syntheticPathology.js';

const tiles = syntheticPathology(400);
const input = toSplitInput(tiles);
const spec = (change: Partial<SplitSpec> = {}): SplitSpec => ({
  parts: [
    ['train', 7],
    ['val', 2],
    ['test', 1],
  ],
  classTargets: { mode: 'balanced' },
  seed: 1n,
  allowShortfall: false,
  ...change,
});

function expectGroupsWhole(result: SplitResult, inp: SplitInput): void {
  const partOfGroup = new Map<number, string>();
  for (const part of result.parts) {
    for (const i of part.samples) {
      const g = inp.groups[i]!;
      expect(partOfGroup.get(g) ?? part.name).toBe(part.name);
      partOfGroup.set(g, part.name);
    }
  }
}

function expectWithinTargets(result: SplitResult): void {
  for (const part of result.parts) {
    let total = 0;
    for (const [label, target] of part.targets) {
      const got = part.classCounts.get(label)!;
      expect(Math.abs(got - target), `${part.name} label ${label}`).toBeLessThanOrEqual(
        Math.max(1, 0.01 * target),
      );
      total += target;
    }
    expect(Math.abs(part.samples.length - total)).toBeLessThanOrEqual(Math.max(1, 0.01 * total));
  }
}

describe('assignSplits', () => {
  it('the synthetic set is imbalanced and grouped', () => {
    const tumor = tiles.filter((t) => t.label === 1).length;
    expect(tumor / tiles.length).toBeGreaterThan(0.05);
    expect(tumor / tiles.length).toBeLessThan(0.3);
    expect(input.groupCount).toBe(400);
  });

  it('balanced 7:2:1: no group in two parts, every count within 1% of its target', () => {
    const result = assignSplits(input, spec());
    expectGroupsWhole(result, input);
    expectWithinTargets(result);
    const [train, val, test] = result.parts;
    expect(Math.abs(train!.classCounts.get(0)! - train!.classCounts.get(1)!)).toBeLessThanOrEqual(
      1,
    );
    expect(val!.samples.length / test!.samples.length).toBeCloseTo(2, 1);
    expect(result.shortfalls).toEqual([]);
    expect(result.worstDeviation).toBeLessThanOrEqual(0.01);
  });

  it('explicit ratios and a maximum size', () => {
    const result = assignSplits(
      input,
      spec({ classTargets: { mode: 'ratios', ratios: { 0: 3, 1: 1 } }, maxTotal: 8000 }),
    );
    expectGroupsWhole(result, input);
    expectWithinTargets(result);
    const total = result.parts.reduce((a, p) => a + p.samples.length, 0);
    expect(total).toBe(8000);
    const train = result.parts[0]!;
    expect(train.classCounts.get(0)! / train.classCounts.get(1)!).toBeCloseTo(3, 1);
  });

  it('the same seed gives the same split, another seed a different one', () => {
    const a = assignSplits(input, spec());
    const b = assignSplits(input, spec());
    const c = assignSplits(input, spec({ seed: 2n }));
    expect(a.parts.map((p) => [...p.samples])).toEqual(b.parts.map((p) => [...p.samples]));
    expect(a.parts[0]!.samples).not.toEqual(c.parts[0]!.samples);
  });

  it('k folds with natural targets are disjoint, cover the set, and keep groups whole', () => {
    const k = 5;
    const result = assignSplits(
      input,
      spec({
        parts: Array.from({ length: k }, (_, i) => [`fold-${i}`, 1] as [string, number]),
        classTargets: { mode: 'natural' },
        // Keeping every sample, per-label counts of a fold cannot all be within 1%.
        allowShortfall: true,
      }),
    );
    expectGroupsWhole(result, input);
    const all = result.parts.flatMap((p) => [...p.samples]).sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: input.count }, (_, i) => i));
    for (const p of result.parts) {
      expect(Math.abs(p.samples.length - input.count / k) / (input.count / k)).toBeLessThan(0.02);
    }
  });

  it('impossible targets give an error that says what is possible; allowShortfall returns the best', () => {
    // Every tumor tile belongs to one patient: only one part can hold tumor.
    const lonely = toSplitInput([
      ...tiles.map((t) => ({ ...t, label: 0 })),
      ...Array.from({ length: 300 }, (_, i) => ({ patient: 9999, slide: 1, x: i, y: 0, label: 1 })),
    ]);
    // The CLI is told its flag, an RPC caller the request's field, a library caller the option.
    expect(() => assignSplits(lonely, spec(), splitsFlagOf)).toThrow(
      /cannot be met while keeping every group in one part: .*target \d+, best found 0.*or pass --allow-shortfall to accept/,
    );
    expect(() => assignSplits(lonely, spec(), requestFieldOf)).toThrow(
      /or pass allow_shortfall to accept/,
    );
    expect(() => assignSplits(lonely, spec())).toThrow(/or pass allowShortfall to accept/);
    const best = assignSplits(lonely, spec({ allowShortfall: true }));
    expect(best.shortfalls.length).toBeGreaterThan(0);
    expectGroupsWhole(best, lonely);

    const giant = toSplitInput([
      ...tiles,
      ...Array.from({ length: 300_000 }, (_, i) => ({
        patient: 5000,
        slide: 1,
        x: i,
        y: 0,
        label: 0,
      })),
    ]);
    expect(() => assignSplits(giant, spec({ classTargets: { mode: 'natural' } }))).toThrow(
      /a group of 300\d\d\d samples is larger than part train/,
    );
    expect(() =>
      assignSplits(input, spec({ classTargets: { mode: 'ratios', ratios: { 2: 1 } } })),
    ).toThrow(/label 2 has no samples/);
  });
});
