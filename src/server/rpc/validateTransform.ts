import type { Transform__Output } from '../../generated/scylla_loader/v1/Transform.js';
import {
  type CropSpec,
  type Interpolation,
  invalidArgument,
  type OutputSpec,
  type TransformLimits,
  type TransformSpec,
} from '../../core/index.js';

const INTERPOLATIONS: Record<string, Interpolation> = {
  INTERPOLATION_UNSPECIFIED: 'bilinear',
  INTERPOLATION_BILINEAR: 'bilinear',
  INTERPOLATION_BICUBIC: 'bicubic',
  INTERPOLATION_LANCZOS3: 'lanczos3',
  INTERPOLATION_NEAREST: 'nearest',
};

const OUTPUTS: Record<string, OutputSpec['format']> = {
  TRANSFORM_OUTPUT_UNSPECIFIED: 'raw',
  TRANSFORM_OUTPUT_RAW: 'raw',
  TRANSFORM_OUTPUT_JPEG: 'jpeg',
  TRANSFORM_OUTPUT_WEBP: 'webp',
};

const BAD_IMAGE: Record<string, TransformSpec['badImage']> = {
  BAD_IMAGE_POLICY_UNSPECIFIED: 'fail',
  BAD_IMAGE_POLICY_FAIL: 'fail',
  BAD_IMAGE_POLICY_SKIP: 'skip',
};

/**
 * The request's transform, checked field by field: INVALID_ARGUMENT names the field, the value
 * and the allowed range. Defaults follow the proto (unspecified enums, a quality of 0, and the
 * random-resized crop's 0 ranges mean their documented values). A raw output needs a crop, so
 * that every sample of a batch has one shape, and a batch of it must fit one response.
 */
export function validateTransform(
  t: Transform__Output,
  batchSize: number,
  limits: Pick<TransformLimits, 'maxTransformSide'> & { maxMessageBytes: number },
): TransformSpec {
  const side = limits.maxTransformSide;
  if (t.channels !== 1 && t.channels !== 3) {
    throw invalidArgument(
      `transform.channels ${t.channels} is not allowed: use 1 (grey) or 3 (RGB)`,
    );
  }
  if (t.resize > side) {
    throw invalidArgument(
      `transform.resize ${t.resize} is out of range: use 0 (no resize) to ${side} ` +
        '(the server limit, SCYLLA_LOADER_MAX_TRANSFORM_SIDE)',
    );
  }
  const crop = validateCrop(t, side);
  if (!(t.horizontalFlip >= 0 && t.horizontalFlip <= 1)) {
    throw invalidArgument(
      `transform.horizontal_flip ${t.horizontalFlip} is not a probability: use 0 to 1`,
    );
  }
  const interpolation = lookup(INTERPOLATIONS, t.interpolation, 'transform.interpolation');
  const format = lookup(OUTPUTS, t.output, 'transform.output');
  const badImage = lookup(BAD_IMAGE, t.badImagePolicy, 'transform.bad_image_policy');
  let output: OutputSpec;
  if (format === 'raw') {
    if (t.quality !== 0) {
      throw invalidArgument(
        `transform.quality ${t.quality} applies to JPEG or WebP output only: leave it 0 for RAW`,
      );
    }
    if (crop.kind === 'none') {
      throw invalidArgument(
        'transform.output RAW needs center_crop or random_resized_crop, so that every sample ' +
          'of a batch has the same shape; or ask for JPEG or WebP output',
      );
    }
    const sampleBytes = crop.height * crop.width * t.channels;
    if (batchSize * sampleBytes > limits.maxMessageBytes - (1 << 20)) {
      throw invalidArgument(
        `a batch of ${batchSize} raw ${crop.height}x${crop.width}x${t.channels} samples is ` +
          `${batchSize * sampleBytes} bytes, over the server's response limit of ` +
          `${limits.maxMessageBytes} bytes less 1 MiB for ids, labels and the token ` +
          `(SCYLLA_LOADER_MAX_MESSAGE_BYTES); use a batch size of at most ` +
          `${Math.max(1, Math.floor((limits.maxMessageBytes - (1 << 20)) / sampleBytes))}`,
      );
    }
    output = { format };
  } else {
    const quality = t.quality === 0 ? 90 : t.quality;
    if (quality > 100) {
      throw invalidArgument(`transform.quality ${t.quality} is out of range: use 1 to 100 (0: 90)`);
    }
    output = { format, quality };
  }
  return {
    channels: t.channels,
    resize: t.resize,
    crop,
    flipProbability: t.horizontalFlip,
    interpolation,
    output,
    badImage,
  };
}

function validateCrop(t: Transform__Output, side: number): CropSpec {
  if (t.crop === 'centerCrop' && t.centerCrop) {
    const { height, width } = t.centerCrop;
    checkSide('transform.center_crop.height', height, side);
    checkSide('transform.center_crop.width', width, side);
    return { kind: 'center', height, width };
  }
  if (t.crop === 'randomResizedCrop' && t.randomResizedCrop) {
    const c = t.randomResizedCrop;
    checkSide('transform.random_resized_crop.height', c.height, side);
    checkSide('transform.random_resized_crop.width', c.width, side);
    const scaleMin = c.scaleMin === 0 ? 0.08 : c.scaleMin;
    const scaleMax = c.scaleMax === 0 ? 1 : c.scaleMax;
    if (!(scaleMin > 0 && scaleMin <= scaleMax && scaleMax <= 1)) {
      throw invalidArgument(
        `transform.random_resized_crop scale [${c.scaleMin}, ${c.scaleMax}] is not a range ` +
          'within (0, 1]: use 0 < scale_min <= scale_max <= 1 (0 means 0.08 and 1)',
      );
    }
    const ratioMin = c.ratioMin === 0 ? 3 / 4 : c.ratioMin;
    const ratioMax = c.ratioMax === 0 ? 4 / 3 : c.ratioMax;
    if (!(ratioMin > 0 && ratioMin <= ratioMax && Number.isFinite(ratioMax))) {
      throw invalidArgument(
        `transform.random_resized_crop ratio [${c.ratioMin}, ${c.ratioMax}] is not a range of ` +
          'aspect ratios: use 0 < ratio_min <= ratio_max (0 means 3/4 and 4/3)',
      );
    }
    return {
      kind: 'random-resized',
      height: c.height,
      width: c.width,
      scale: [scaleMin, scaleMax],
      ratio: [ratioMin, ratioMax],
    };
  }
  return { kind: 'none' };
}

function checkSide(field: string, value: number, side: number): void {
  if (value < 1 || value > side) {
    throw invalidArgument(
      `${field} ${value} is out of range: use 1 to ${side} ` +
        '(the server limit, SCYLLA_LOADER_MAX_TRANSFORM_SIDE)',
    );
  }
}

function lookup<T>(table: Record<string, T>, value: string, field: string): T {
  const v = table[value];
  if (v === undefined) {
    throw invalidArgument(`unknown ${field} ${value}; use one of ${Object.keys(table).join(', ')}`);
  }
  return v;
}
