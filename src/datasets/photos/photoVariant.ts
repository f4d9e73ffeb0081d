import { RandomStream } from '../../core/index.js';

/**
 * How image `index` is made from its source photo, as numbers independent of the photo's
 * size: RandomResizedCrop's parameters (area share, aspect, position) plus a flip and a
 * slight change of brightness and saturation.
 *
 * @internal
 */
export interface PhotoVariant {
  /** Index of the source photo: `index mod sourceCount`. */
  source: number;
  /** Share of the source's area the crop covers, in [MIN_AREA, 1]. */
  area: number;
  /** Crop width / height, log-uniform in [3/4, 4/3]. */
  aspect: number;
  /** Where the crop sits in the room left over, 0 (left/top) to 1 (right/bottom). */
  x: number;
  y: number;
  flip: boolean;
  /** Where the output's longer side falls in the preset's range, 0 to 1. */
  size: number;
  /** Multipliers for sharp's `modulate`, in [0.9, 1.1]. */
  brightness: number;
  saturation: number;
}

/**
 * Smallest crop area share. Larger than torchvision's 0.08 so that a crop of the smallest
 * source (300 px short side) is not blown up into a blur that compresses unlike a photo.
 *
 * @internal
 */
export const MIN_AREA = 0.25;

/**
 * The variant of image `index` among `sourceCount` source photos: a pure function of both (a
 * ChaCha20 stream keyed by the index), so a re-run makes the same image. Two indexes with the
 * same source differ in their crop.
 *
 * @internal
 */
export function photoVariant(index: number, sourceCount: number): PhotoVariant {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`bad image index ${index}`);
  if (!Number.isInteger(sourceCount) || sourceCount < 1) {
    throw new RangeError(`bad source count ${sourceCount}`);
  }
  const random = new RandomStream('photo-variant', index);
  const uniform = (): number => random.nextUint32() / 2 ** 32;
  const between = (lo: number, hi: number): number => lo + (hi - lo) * uniform();
  return {
    source: index % sourceCount,
    area: between(MIN_AREA, 1),
    aspect: Math.exp(between(Math.log(3 / 4), Math.log(4 / 3))),
    x: uniform(),
    y: uniform(),
    flip: uniform() < 0.5,
    size: uniform(),
    brightness: between(0.9, 1.1),
    saturation: between(0.9, 1.1),
  };
}

/**
 * The crop window of `variant` in a `width` x `height` photo, in whole pixels inside it: the
 * variant's area share at aspect `aspect` (the variant's own unless the output's is fixed),
 * shrunk to fit when the photo is too narrow or too low for it.
 *
 * @internal
 */
export function cropWindow(
  variant: PhotoVariant,
  width: number,
  height: number,
  aspect: number = variant.aspect,
): { left: number; top: number; width: number; height: number } {
  const area = variant.area * width * height;
  let w = Math.sqrt(area * aspect);
  let h = Math.sqrt(area / aspect);
  const fit = Math.min(1, width / w, height / h);
  w = Math.max(1, Math.min(width, Math.round(w * fit)));
  h = Math.max(1, Math.min(height, Math.round(h * fit)));
  return {
    left: Math.round(variant.x * (width - w)),
    top: Math.round(variant.y * (height - h)),
    width: w,
    height: h,
  };
}
