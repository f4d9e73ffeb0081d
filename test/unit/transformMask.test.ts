import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { decodeMaskPng, readPngHeader } from '../../src/core/transform/decodeMaskPng.js';
import { nearestAxes, sampleMask } from '../../src/core/transform/maskGeometry.js';
import { loadNativeTransform } from '../../src/core/transform/nativeTransform.js';
import { planTransform } from '../../src/core/transform/planTransform.js';
import { SampleRandom } from '../../src/core/transform/SampleRandom.js';
import { transformImage } from '../../src/core/transform/transformImage.js';
import { transformMask } from '../../src/core/transform/transformMask.js';
import { type TransformSpec, validateTransformRequest } from '../../src/core/transform/steps.js';
import {
  type PairKind,
  mismatchShare,
  palettePng,
  segmentationPair,
} from '../support/maskDataset.js';

const MAX_PIXELS = 4_000_000;

function spec(resize: number, flip: number): TransformSpec {
  return validateTransformRequest(
    {
      channels: 3,
      resize,
      crop: 'randomResizedCrop',
      randomResizedCrop: {
        height: 64,
        width: 56,
        scaleMin: 0.2,
        scaleMax: 1,
        ratioMin: 0,
        ratioMax: 0,
      },
      horizontalFlip: flip,
      interpolation: 'INTERPOLATION_BILINEAR',
      output: 'TRANSFORM_OUTPUT_RAW',
      quality: 0,
      badImagePolicy: 'BAD_IMAGE_POLICY_FAIL',
      masks: true,
    },
    { batchSize: 8, maxTransformSide: 4096, maxMessageBytes: 64 << 20 },
  );
}

describe('mask geometry (nearest neighbour)', () => {
  it('maps output pixels to the source pixel under their centre, through resize, region and flip', () => {
    const random = new SampleRandom(1n, 0, Buffer.alloc(16));
    const plan = planTransform(
      { resize: 0, crop: { kind: 'center', height: 4, width: 6 }, flipProbability: 0 },
      8,
      4,
      random,
      MAX_PIXELS,
    );
    expect(Array.from(nearestAxes(plan).cols)).toEqual([1, 2, 3, 4, 5, 6]);
    const padded = planTransform(
      { resize: 0, crop: { kind: 'center', height: 2, width: 4 }, flipProbability: 1 },
      2,
      2,
      random,
      MAX_PIXELS,
    );
    // Padded one column each side, then mirrored: padding stays -1 (zero).
    expect(Array.from(nearestAxes(padded).cols)).toEqual([-1, 1, 0, -1]);
    // A halving resize picks every other source pixel, the one under each centre.
    const half = planTransform(
      { resize: 2, crop: { kind: 'center', height: 2, width: 4 }, flipProbability: 0 },
      8,
      4,
      random,
      MAX_PIXELS,
    );
    expect(Array.from(nearestAxes(half).cols)).toEqual([1, 3, 5, 7]);
  });

  it('applies the image EXIF orientation to a mask of the stored pixels, as sharp orients images', async () => {
    const w = 5;
    const h = 3;
    const stored = Buffer.from(Array.from({ length: w * h }, (_, i) => i * 10));
    for (let orientation = 1; orientation <= 8; orientation++) {
      const jpeg = await sharp(stored, { raw: { width: w, height: h, channels: 1 } })
        .withMetadata({ orientation })
        .png()
        .toBuffer();
      const { data: oriented, info } = await sharp(jpeg)
        .autoOrient()
        .extractChannel(0)
        .raw()
        .toBuffer({ resolveWithObject: true });
      const plan = planTransform(
        {
          resize: 0,
          crop: { kind: 'center', height: info.height, width: info.width },
          flipProbability: 0,
        },
        info.width,
        info.height,
        new SampleRandom(1n, 0, Buffer.alloc(16)),
        MAX_PIXELS,
      );
      const out = Buffer.alloc(info.width * info.height);
      sampleMask(stored, w, h, orientation, plan, out, 0);
      expect(Array.from(out), `orientation ${orientation}`).toEqual(Array.from(oriented));
    }
  });

  it('decodes palette PNGs to their indices and grey PNGs to their levels, every row filter', async () => {
    const w = 37;
    const h = 11;
    const indices = Buffer.from(Array.from({ length: w * h }, (_, i) => (i * 7) % 5));
    const palette = [0, 1, 2, 3, 4].map((i) => [i * 50, 255 - i * 40, 17] as const);
    const png = palettePng(indices, w, h, palette);
    expect(await decodeMaskPng(png, readPngHeader(png)!, true)).toEqual(indices);
    // What sharp makes of it is the colours: the indices are lost there.
    const { data: viaSharp } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
    expect(viaSharp[3]).toBe(palette[indices[1]!]![0]);
    const grey = Buffer.from(Array.from({ length: w * h }, (_, i) => (i * 13) & 0xff));
    const greyPng = await sharp(grey, { raw: { width: w, height: h, channels: 1 } })
      .toColourspace('b-w')
      .png({ adaptiveFiltering: true })
      .toBuffer();
    expect(await decodeMaskPng(greyPng, readPngHeader(greyPng)!, false)).toEqual(grey);
  });

  it.each([2, 4, 16])(
    'unpacks a palette PNG of fewer than 8 bits (%i colours) to the indices of its colours',
    async (colours) => {
      const w = 29;
      const h = 7;
      const rgb = Buffer.alloc(w * h * 3);
      for (let i = 0; i < w * h; i++) rgb.fill(((i * 5) % colours) * 15, i * 3, i * 3 + 3);
      const png = await sharp(rgb, { raw: { width: w, height: h, channels: 3 } })
        .png({ palette: true, colours, dither: 0 })
        .toBuffer();
      const header = readPngHeader(png)!;
      expect(header.colorType).toBe(3);
      expect(header.bitDepth).toBeLessThan(8);
      const indices = await decodeMaskPng(png, header, true);
      // Each index's palette colour is the pixel's colour as sharp decodes it.
      const plte = png.indexOf('PLTE', 0, 'latin1') + 4;
      const { data: decoded } = await sharp(png)
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      for (let i = 0; i < w * h; i++) expect(png[plte + indices[i]! * 3]).toBe(decoded[i * 3]);
    },
  );
});

const native = loadNativeTransform().module;

describe.each([
  ['native', native],
  ['sharp', undefined],
] as const)('a mask follows its image (%s)', (_, module) => {
  it.each<PairKind>(['jpeg+grey', 'jpeg-exif6+grey', 'webp+palette', 'png+palette', 'jpeg+rgb'])(
    '%s: after RandomResizedCrop, resize and flip the mask is the function of the image',
    async (kind) => {
      let flips = 0;
      for (let seed = 1; seed <= 6; seed++) {
        const { image, mask, hi } = await segmentationPair(kind, 150 + seed * 13, 120, seed);
        const s = spec(seed % 2 === 0 ? 96 : 0, 0.5);
        const random = new SampleRandom(BigInt(seed), 0, Buffer.alloc(16, seed));
        const out = await transformImage(image, s, random, MAX_PIXELS, module);
        const m = await transformMask(mask, out.target, MAX_PIXELS, module);
        if (out.target.plan.flip) flips++;
        expect(m.decoder).toBe(kind.endsWith('+rgb') ? 'sharp' : module ? 'native' : 'js');
        if (module) {
          // The native module and the fallback pick the very same pixels.
          const fallback = await transformMask(mask, out.target, MAX_PIXELS);
          expect(fallback.data.equals(m.data)).toBe(true);
        }
        expect(mismatchShare(out.data, m.data, 56, 64, 3, hi)).toBeLessThan(0.01);
        // The blob as stored, naively resized to the output: the same check sees it is wrong.
        const { data: naive } = await sharp(mask)
          .extractChannel(0)
          .resize(56, 64, { fit: 'fill', kernel: 'nearest' })
          .raw()
          .toBuffer({ resolveWithObject: true });
        const naiveMask = kind.endsWith('+palette') ? naive.map((v) => (v > 0 ? 1 : 0)) : naive;
        expect(mismatchShare(out.data, naiveMask, 56, 64, 3, hi)).toBeGreaterThan(0.03);
      }
      expect(flips).toBeGreaterThan(0);
    },
  );
});

describe('a mask that does not fit its image', () => {
  it('is refused naming both sizes, and a missing one as missing', async () => {
    const { image } = await segmentationPair('jpeg+grey', 100, 80, 1);
    const { mask } = await segmentationPair('jpeg+grey', 90, 80, 1);
    const s = spec(0, 0);
    const out = await transformImage(
      image,
      s,
      new SampleRandom(1n, 0, Buffer.alloc(16)),
      MAX_PIXELS,
    );
    await expect(transformMask(mask, out.target, MAX_PIXELS)).rejects.toThrow(
      'the mask is 90x80, its image 100x80 (as stored)',
    );
    await expect(transformMask(undefined, out.target, MAX_PIXELS)).rejects.toMatchObject({
      reason: 'mask_missing',
    });
  });
});
