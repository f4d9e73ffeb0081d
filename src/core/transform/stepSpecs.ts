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
