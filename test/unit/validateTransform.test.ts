import { describe, expect, it } from 'vitest';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import type { Transform__Output } from '../../src/generated/scylla_loader/v1/Transform.js';
import { validateTransform } from '../../src/server/rpc/validateTransform.js';

const limits = { maxTransformSide: 4096, maxMessageBytes: 256 * 2 ** 20 };
const base: Transform__Output = {
  channels: 3,
  resize: 0,
  horizontalFlip: 0,
  interpolation: 'INTERPOLATION_UNSPECIFIED',
  output: 'TRANSFORM_OUTPUT_UNSPECIFIED',
  quality: 0,
  badImagePolicy: 'BAD_IMAGE_POLICY_UNSPECIFIED',
  masks: false,
  crop: 'randomResizedCrop',
  randomResizedCrop: {
    height: 224,
    width: 224,
    scaleMin: 0,
    scaleMax: 0,
    ratioMin: 0,
    ratioMax: 0,
  },
};

function message(t: Partial<Transform__Output>, batchSize = 64): string {
  try {
    validateTransform({ ...base, ...t }, batchSize, limits);
  } catch (err) {
    expect(err).toBeInstanceOf(LoaderError);
    expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
    return (err as Error).message;
  }
  return 'valid';
}

describe('validateTransform', () => {
  it("applies the proto's defaults: torchvision's ranges, bilinear, raw, fail, quality 90", () => {
    expect(validateTransform(base, 64, limits)).toEqual({
      channels: 3,
      resize: 0,
      crop: {
        kind: 'random-resized',
        height: 224,
        width: 224,
        scale: [0.08, 1],
        ratio: [3 / 4, 4 / 3],
      },
      flipProbability: 0,
      interpolation: 'bilinear',
      output: { format: 'raw' },
      badImage: 'fail',
    });
    expect(
      validateTransform(
        { ...base, crop: undefined, randomResizedCrop: null, output: 'TRANSFORM_OUTPUT_WEBP' },
        64,
        limits,
      ).output,
    ).toEqual({ format: 'webp', quality: 90 });
  });

  it('names the field, the value and the allowed range of every invalid one', () => {
    expect(message({ channels: 4 })).toMatch(/transform\.channels 4 .*1 \(grey\) or 3 \(RGB\)/);
    expect(message({ channels: 0 })).toMatch(/transform\.channels 0/);
    expect(message({ resize: 4097 })).toMatch(
      /transform\.resize 4097 is out of range: use 0 .* to 4096/,
    );
    expect(message({ horizontalFlip: -0.1 })).toMatch(/horizontal_flip -0\.1 is not a probability/);
    expect(message({ horizontalFlip: Number.NaN })).toMatch(/horizontal_flip NaN/);
    expect(
      message({ randomResizedCrop: { ...base.randomResizedCrop!, ratioMin: 2, ratioMax: 1 } }),
    ).toMatch(/ratio \[2, 1\] is not a range/);
    expect(message({ randomResizedCrop: { ...base.randomResizedCrop!, scaleMax: 1.5 } })).toMatch(
      /scale \[0, 1\.5\] is not a range within \(0, 1\]/,
    );
    expect(message({ randomResizedCrop: { ...base.randomResizedCrop!, width: 0 } })).toMatch(
      /random_resized_crop\.width 0 is out of range: use 1 to 4096/,
    );
    expect(message({ crop: 'centerCrop', centerCrop: { height: 5000, width: 8 } })).toMatch(
      /center_crop\.height 5000/,
    );
    expect(message({ crop: undefined, randomResizedCrop: null })).toMatch(/RAW needs center_crop/);
    expect(message({ quality: 50 })).toMatch(/quality 50 applies to JPEG or WebP output only/);
    expect(message({ output: 'TRANSFORM_OUTPUT_JPEG', quality: 101 })).toMatch(/quality 101/);
    expect(message({ interpolation: 'INTERPOLATION_SPLINE' as never })).toMatch(
      /unknown transform\.interpolation INTERPOLATION_SPLINE; use one of/,
    );
    expect(message({ badImagePolicy: 7 as never })).toMatch(/unknown transform\.bad_image_policy/);
  });

  it('refuses a raw batch larger than one response, naming the batch size that fits', () => {
    // 224 x 224 x 3 = 150,528 bytes a sample: 1,776 fit in 256 MiB less 1 MiB.
    expect(message({}, 1776)).toBe('valid');
    expect(message({}, 1777)).toMatch(/use a batch size of at most 1776/);
  });
});
