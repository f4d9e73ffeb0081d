import { describe, expect, it } from 'vitest';
import {
  planTransform,
  randomResizedRegion,
  shorterSideTo,
} from '../../src/core/transform/planTransform.js';
import { roundHalfEven } from '../../src/core/transform/roundHalfEven.js';
import { SampleRandom } from '../../src/core/transform/SampleRandom.js';

const id = (i: number): Buffer => {
  const b = Buffer.alloc(16);
  b.writeUInt32BE(i, 12);
  return b;
};

describe('SampleRandom', () => {
  it('is a pure function of (seed, epoch, id): equal parts give equal draws, any other part others', () => {
    const draws = (seed: bigint, epoch: number, i: number): number[] => {
      const r = new SampleRandom(seed, epoch, id(i));
      return Array.from({ length: 20 }, () => r.uniform());
    };
    expect(draws(7n, 3, 1)).toEqual(draws(7n, 3, 1));
    expect(draws(7n, 3, 1)).not.toEqual(draws(8n, 3, 1));
    expect(draws(7n, 3, 1)).not.toEqual(draws(7n, 4, 1));
    expect(draws(7n, 3, 1)).not.toEqual(draws(7n, 3, 2));
    // The full 64-bit seed counts.
    expect(draws(2n ** 64n - 1n, 0, 0)).not.toEqual(draws(2n ** 63n - 1n, 0, 0));
  });

  it("with a mixed epoch's position: new draws per position, the same for the same position", () => {
    const draws = (position?: number): number[] => {
      const r = new SampleRandom(7n, 3, id(1), position);
      return Array.from({ length: 20 }, () => r.uniform());
    };
    expect(draws(12)).toEqual(draws(12));
    expect(draws(12)).not.toEqual(draws(13));
    // Position 0 is a position, not the single-source draws.
    expect(draws(0)).not.toEqual(draws());
  });

  it('draws uniformly in [0, 1) past its first block of words', () => {
    const r = new SampleRandom(1n, 0, id(0));
    const xs = Array.from({ length: 20_000 }, () => r.uniform());
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.49);
    expect(mean).toBeLessThan(0.51);
    const tenths = new Array<number>(10).fill(0);
    for (const x of xs) tenths[Math.floor(x * 10)]!++;
    for (const t of tenths) expect(Math.abs(t - 2000)).toBeLessThan(200);
  });

  it('integerTo covers [0, n] inclusive and nothing else', () => {
    const r = new SampleRandom(2n, 0, id(0));
    const seen = new Set(Array.from({ length: 500 }, () => r.integerTo(4)));
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('roundHalfEven', () => {
  it("rounds as Python's round: ties to the even neighbour", () => {
    expect([0.5, 1.5, 2.5, 58.5, 59.5, -0.5, 2.4, 2.6].map(roundHalfEven)).toEqual([
      0, 2, 2, 58, 60, -0, 2, 3,
    ]);
  });
});

describe('shorterSideTo', () => {
  it("gives the shorter side the size and scales the longer one down to an integer, as torchvision's Resize", () => {
    expect(shorterSideTo(256, 500, 375)).toEqual({ width: 341, height: 256 });
    expect(shorterSideTo(256, 375, 500)).toEqual({ width: 256, height: 341 });
    expect(shorterSideTo(224, 300, 300)).toEqual({ width: 224, height: 224 });
    expect(shorterSideTo(10, 1000, 3)).toEqual({ width: 3333, height: 10 });
  });
});

describe('planTransform', () => {
  const r = (): SampleRandom => new SampleRandom(0n, 0, id(0));

  it('center crop: the middle, offsets rounded half to even', () => {
    const plan = planTransform(
      { resize: 256, crop: { kind: 'center', height: 224, width: 224 }, flipProbability: 0 },
      500,
      375,
      r(),
    );
    // 341 x 256: (341 - 224) / 2 = 58.5 rounds to 58, as torchvision's int(round(58.5)).
    expect(plan.resize).toEqual({ width: 341, height: 256 });
    expect(plan.region).toEqual({ left: 58, top: 16, width: 224, height: 224 });
    expect(plan.pad).toBeUndefined();
    expect([plan.width, plan.height, plan.flip]).toEqual([224, 224, false]);
  });

  it('center crop larger than the image: zero padding, the odd pixel after, crop where it fits', () => {
    const plan = planTransform(
      { resize: 0, crop: { kind: 'center', height: 31, width: 10 }, flipProbability: 0 },
      40,
      20,
      r(),
    );
    expect(plan.pad).toEqual({ top: 5, bottom: 6, left: 0, right: 0 });
    expect(plan.region).toEqual({ left: 15, top: 0, width: 10, height: 20 });
    expect([plan.width, plan.height]).toEqual([10, 31]);
  });

  it('no crop keeps the (resized) image', () => {
    const plan = planTransform(
      { resize: 100, crop: { kind: 'none' }, flipProbability: 0 },
      300,
      200,
      r(),
    );
    expect(plan.region).toBeUndefined();
    expect([plan.width, plan.height]).toEqual([150, 100]);
  });

  it('flips with the asked probability (within 5 points over 2,000 samples), a fair share of ids each', () => {
    for (const p of [0.5, 0.2]) {
      let flips = 0;
      for (let i = 0; i < 2000; i++) {
        const plan = planTransform(
          { resize: 0, crop: { kind: 'none' }, flipProbability: p },
          10,
          10,
          new SampleRandom(5n, 1, id(i)),
        );
        if (plan.flip) flips++;
      }
      expect(Math.abs(flips / 2000 - p)).toBeLessThan(0.05);
    }
    const never = planTransform(
      { resize: 0, crop: { kind: 'none' }, flipProbability: 0 },
      9,
      9,
      r(),
    );
    const always = planTransform(
      { resize: 0, crop: { kind: 'none' }, flipProbability: 1 },
      9,
      9,
      r(),
    );
    expect([never.flip, always.flip]).toEqual([false, true]);
  });
});

describe('randomResizedRegion', () => {
  it('stays inside the image, within the scale and ratio ranges (up to rounding), over 2,000 samples', () => {
    const scale = [0.08, 1] as const;
    const ratio = [3 / 4, 4 / 3] as const;
    const areas: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const [w, h] = [200 + (i % 300), 150 + ((i * 7) % 350)];
      const g = randomResizedRegion(w, h, scale, ratio, new SampleRandom(9n, 0, id(i)));
      expect(g.left).toBeGreaterThanOrEqual(0);
      expect(g.top).toBeGreaterThanOrEqual(0);
      expect(g.left + g.width).toBeLessThanOrEqual(w);
      expect(g.top + g.height).toBeLessThanOrEqual(h);
      const share = (g.width * g.height) / (w * h);
      const aspect = g.width / g.height;
      // Sizes are rounded to whole pixels: a pixel either way on each side.
      const slack = (g.width + g.height + 1) / (w * h);
      expect(share).toBeGreaterThanOrEqual(scale[0] - slack);
      expect(share).toBeLessThanOrEqual(scale[1] + slack);
      expect(aspect).toBeGreaterThanOrEqual(ratio[0] * (1 - 2 / g.height) - 1e-9);
      expect(aspect).toBeLessThanOrEqual(ratio[1] * (1 + 2 / g.height) + 1e-9);
      areas.push(share);
    }
    // The draws spread over the whole range (shares that do not fit are drawn again, so the
    // mean sits below the range's middle, as in torchvision).
    expect(Math.min(...areas)).toBeLessThan(0.1);
    expect(Math.max(...areas)).toBeGreaterThan(0.9);
    const mean = areas.reduce((a, x) => a + x, 0) / areas.length;
    expect(mean).toBeGreaterThan(0.35);
    expect(mean).toBeLessThan(0.54);
  });

  it('falls back to the largest central crop within the ratio range when no draw fits', () => {
    // A 1000 x 10 strip cannot hold a square of 8% of its area or more.
    const g = randomResizedRegion(1000, 10, [0.08, 1], [1, 1], new SampleRandom(0n, 0, id(0)));
    expect(g).toEqual({ left: 495, top: 0, width: 10, height: 10 });
    const tall = randomResizedRegion(
      10,
      1000,
      [0.5, 1],
      [3 / 4, 4 / 3],
      new SampleRandom(0n, 0, id(0)),
    );
    expect(tall).toEqual({ left: 0, top: 493, width: 10, height: 13 });
  });
});
