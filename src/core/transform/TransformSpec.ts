/** How a resized image's pixels are computed (sharp's kernels). */
export type Interpolation = 'bilinear' | 'bicubic' | 'lanczos3' | 'nearest';

/** The crop of a transform, after any resize. */
export type CropSpec =
  | { kind: 'none' }
  /** The middle `height x width`; a crop larger than the image pads it with zeros. */
  | { kind: 'center'; height: number; width: number }
  /** A random area and aspect resized to `height x width` (torchvision's RandomResizedCrop). */
  | {
      kind: 'random-resized';
      height: number;
      width: number;
      /** Share of the image's area, [min, max] within (0, 1]. */
      scale: readonly [number, number];
      /** Aspect ratio (width / height), [min, max], log-uniform. */
      ratio: readonly [number, number];
    };

/** What a transformed sample is sent as. */
export type OutputSpec = { format: 'raw' } | { format: 'jpeg' | 'webp'; quality: number };

/**
 * A validated server-side transform: decode (EXIF orientation applied, `channels` of output),
 * resize of the shorter side, crop, horizontal flip with a probability, and output. Every
 * random choice is a pure function of (seed, epoch, sample id).
 */
export interface TransformSpec {
  channels: 1 | 3;
  /** Shorter side after the resize, px; 0: no resize. */
  resize: number;
  crop: CropSpec;
  /** Probability in [0, 1] that a sample is mirrored left to right. */
  flipProbability: number;
  interpolation: Interpolation;
  output: OutputSpec;
  /** An undecodable sample: `fail` ends the stream with DATA_LOSS, `skip` counts and drops it. */
  badImage: 'fail' | 'skip';
}

/**
 * Height, width and channels of every output sample when the output is a raw tensor with a
 * fixed shape (a crop is set); undefined otherwise.
 */
export function rawSampleShape(spec: TransformSpec): [number, number, number] | undefined {
  if (spec.output.format !== 'raw' || spec.crop.kind === 'none') return undefined;
  return [spec.crop.height, spec.crop.width, spec.channels];
}
