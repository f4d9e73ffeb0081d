/** Name of a {@link PhotoPreset}. */
export type PhotoPresetName = 'imagenet' | 'small' | 'tiny';

/** The payload presets, in the order the CLI lists them. */
export const PHOTO_PRESET_NAMES: readonly PhotoPresetName[] = ['imagenet', 'small', 'tiny'];

/**
 * How the photo generator sizes and encodes its images.
 *
 * - `imagenet`: the longer side is 500 to 800 px (500 is ImageNet's most common, larger ones
 *   are frequent) and the shorter follows the crop's aspect (3:4 to 4:3, so 500x375 and the
 *   like), JPEG quality 95. These photos are smoother than ImageNet's camera shots (wallpapers
 *   and sample pictures, downscaled): at 500 px even quality 98 stays near 100 kB, so both
 *   size and quality are raised until the mean lands near ImageNet's ~110 kB average:
 *   104 kB over images 0..2999 (`prepare photos --count 3000`).
 * - `small`: 224x224 at quality 90, as the papers' preprocessed ImageNet samples: 14.6 kB
 *   over images 0..2999, below their ~20 kB for the same reason.
 * - `tiny`: 32x32 at quality 50, CIFAR-sized thumbnails of about 500 bytes: samples whose
 *   read costs far more in per-request work than in bytes (the case grouped reads are for).
 */
export interface PhotoPreset {
  name: PhotoPresetName;
  /** Longer output side, px: from `min` to `max`, as the image's `PhotoVariant.size` says. */
  longSide: { min: number; max: number };
  /** Output aspect (width / height) when fixed; undefined: the crop's own aspect. */
  fixedAspect: number | undefined;
  quality: number;
}

/** The presets by name. */
export const PHOTO_PRESETS: Readonly<Record<PhotoPresetName, PhotoPreset>> = {
  imagenet: {
    name: 'imagenet',
    longSide: { min: 500, max: 800 },
    fixedAspect: undefined,
    quality: 95,
  },
  small: {
    name: 'small',
    longSide: { min: 224, max: 224 },
    fixedAspect: 1,
    quality: 90,
  },
  tiny: {
    name: 'tiny',
    longSide: { min: 32, max: 32 },
    fixedAspect: 1,
    quality: 50,
  },
};

/**
 * Output width and height of `preset` for a crop of aspect `aspect` (width / height) and a
 * size share `size` in [0, 1] (0: the shortest long side, 1: the longest).
 *
 * @internal
 */
export function photoOutputSize(
  preset: PhotoPreset,
  aspect: number,
  size: number,
): { width: number; height: number } {
  const a = preset.fixedAspect ?? aspect;
  const long = Math.round(preset.longSide.min + size * (preset.longSide.max - preset.longSide.min));
  return a >= 1
    ? { width: long, height: Math.round(long / a) }
    : { width: Math.round(long * a), height: long };
}
