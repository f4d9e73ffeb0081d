/** How a transform resizes (proto `Interpolation`). */
export type InterpolationName = 'bilinear' | 'bicubic' | 'lanczos3' | 'nearest';
/** What a transformed sample is sent as (proto `TransformOutput`). */
export type TransformOutputName = 'raw' | 'jpeg' | 'webp';
/** What the server does with a sample it cannot decode (proto `BadImagePolicy`). */
export type BadImagePolicyName = 'fail' | 'skip';

/**
 * A server-side transform (proto `Transform`): decode with EXIF orientation to `channels`, then
 * in order resize, crop, horizontal flip and output. Every random choice is a pure function of
 * (seed, epoch, sample id), so a resumed or re-sharded epoch gives identical pixels.
 */
export interface TransformOptions {
  /** 1 (grey) or 3 (RGB); grey, CMYK and alpha inputs are converted. */
  channels: 1 | 3;
  /** Resize so the shorter side has this many pixels (default: no resize). */
  resize?: number;
  /** The middle `height x width` (zero-padded when the image is smaller). */
  centerCrop?: { height: number; width: number };
  /**
   * A random area (`scale`, default [0.08, 1]) and aspect (`ratio`, default [3/4, 4/3]) resized
   * to `height x width`.
   */
  randomResizedCrop?: {
    height: number;
    width: number;
    scale?: readonly [number, number];
    ratio?: readonly [number, number];
  };
  /** Probability in [0, 1] of mirroring a sample left to right (default 0). */
  horizontalFlip?: number;
  /** Default `bilinear`. */
  interpolation?: InterpolationName;
  /**
   * `raw` (default): uint8 pixels, the batch one contiguous N x H x W x C tensor (needs a
   * crop); `jpeg` or `webp`: re-encoded at `quality` (default 90).
   */
  output?: TransformOutputName;
  quality?: number;
  /** `fail` (default): end the stream with DATA_LOSS; `skip`: leave the sample out and count it. */
  badImagePolicy?: BadImagePolicyName;
  /**
   * The samples' label blobs are segmentation masks aligned with the images: the server applies
   * every geometric step of the image (EXIF orientation, resize, crop, flip) to them by nearest
   * neighbour, with the same random draws, and the batch carries them as `masks` (a uint8
   * N x H x W x 1 tensor). Needs `raw` output with a crop. Without it (default), label blobs
   * come as stored: a crop or flip does not touch them.
   */
  masks?: boolean;
}
