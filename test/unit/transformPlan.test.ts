import { describe, expect, it } from 'vitest';
import {
  largestPlanPixels,
  planTransform,
  randomResizedRegion,
  shorterSideTo,
} from '../../src/core/transform/planTransform.js';
import { serveSettingNames } from '../../src/cli/settings/serveSettings.js';
import { roundHalfEven } from '../../src/core/transform/roundHalfEven.js';
import { SampleRandom } from '../../src/core/transform/SampleRandom.js';
import { UndecodableImageError } from '../../src/core/transform/UndecodableImageError.js';

/** The default `maxImagePixels`. */
const LIMIT = 89_478_485;

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
      LIMIT,
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
      LIMIT,
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
      LIMIT,
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
          LIMIT,
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
      LIMIT,
    );
    const always = planTransform(
      { resize: 0, crop: { kind: 'none' }, flipProbability: 1 },
      9,
      9,
      r(),
      LIMIT,
    );
    expect([never.flip, always.flip]).toEqual([false, true]);
  });

  it('refuses a plan whose resized image is over the pixel limit, as it refuses such a source', () => {
    // The long image of issue 36: 65,500 x 1,360 is under the limit (89.1 M pixels), but its
    // resize to a shorter side of 4,096 would be 197,270 x 4,096 (808 M pixels).
    const spec = {
      resize: 4096,
      crop: {
        kind: 'random-resized',
        height: 224,
        width: 224,
        scale: [0.08, 1],
        ratio: [3 / 4, 4 / 3],
      },
      flipProbability: 0.5,
    } as const;
    expect(65_500 * 1_360).toBeLessThanOrEqual(LIMIT);
    const err = catchPlan(() => planTransform(spec, 65_500, 1_360, r(), LIMIT));
    expect(err).toBeInstanceOf(UndecodableImageError);
    expect(err.reason).toBe('pixel_limit');
    expect(err.code).toBe('DATA_LOSS');
    expect(err.message).toContain('resized image would be 197270x4096');
    // The limit is named as the caller names it: its field for a library caller, the
    // variable under `serve`.
    expect(err.message).toMatch(/pixels, set by maxImagePixels$/);
    const served = catchPlan(() =>
      planTransform(spec, 65_500, 1_360, r(), LIMIT, serveSettingNames()),
    );
    expect(served.message).toMatch(
      /pixels, set by --max-image-pixels \(SCYLLA_LOADER_MAX_IMAGE_PIXELS\)$/,
    );
    // The same spec on an ordinary photo plans as ever.
    expect(planTransform(spec, 500, 375, r(), LIMIT).resize).toEqual({ width: 5461, height: 4096 });
    // A resize alone (no crop after it) is the output itself: refused as well.
    const alone = catchPlan(() =>
      planTransform({ ...spec, crop: { kind: 'none' } }, 65_500, 1_360, r(), LIMIT),
    );
    expect(alone.reason).toBe('pixel_limit');
  });

  it('refuses an upscaled output over the pixel limit, whatever the source', () => {
    const tiny =
      (crop: Parameters<typeof planTransform>[0]['crop'], resize = 0) =>
      () =>
        planTransform({ resize, crop, flipProbability: 0 }, 28, 28, r(), 1_000_000);
    // A random-resized crop of a 28 x 28 image to 2,048 x 2,048 (4.2 M pixels).
    const rrc = {
      kind: 'random-resized',
      height: 2048,
      width: 2048,
      scale: [0.08, 1],
      ratio: [3 / 4, 4 / 3],
    } as const;
    const err = catchPlan(tiny(rrc));
    expect(err.reason).toBe('pixel_limit');
    expect(err.message).toContain('resized crop would be 2048x2048');
    // A center crop padded to 2,048 x 2,048: the output buffer is the padded one.
    const padded = catchPlan(tiny({ kind: 'center', height: 2048, width: 2048 }));
    expect(padded.message).toContain('output would be 2048x2048');
    // Under the limit (1,000 x 1,000 exactly) is planned.
    expect(tiny({ kind: 'center', height: 1000, width: 1000 })().width).toBe(1000);
    expect(tiny({ kind: 'none' }, 1000)().resize).toEqual({ width: 1000, height: 1000 });
  });

  it('largestPlanPixels is the largest of source, resized image, resized crop and output', () => {
    const rrc = {
      kind: 'random-resized',
      height: 300,
      width: 200,
      scale: [0.08, 1],
      ratio: [3 / 4, 4 / 3],
    } as const;
    const plan = (resize: number, w: number, h: number) =>
      planTransform({ resize, crop: rrc, flipProbability: 0 }, w, h, r(), LIMIT);
    expect(largestPlanPixels(plan(0, 28, 28))).toBe(200 * 300); // the output
    expect(largestPlanPixels(plan(1024, 28, 28))).toBe(1024 * 1024); // the resized image
    expect(largestPlanPixels(plan(0, 4000, 3000))).toBe(4000 * 3000); // the source
  });
});

function catchPlan(f: () => unknown): UndecodableImageError {
  try {
    f();
  } catch (err) {
    return err as UndecodableImageError;
  }
  throw new Error('the plan was not refused');
}

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
