import { roundHalfEven } from './roundHalfEven.js';
import type { SampleRandom } from './SampleRandom.js';
import type { CropSpec } from './stepSpecs.js';

/** A rectangle of an image, in pixels. */
export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * The geometry of one sample's transform, in the order it applies (torchvision's order): the
 * oriented image of `source` size is resized, a region of it is cut (and padded), the region is
 * resized to `output`, and mirrored when `flip`. Pure data; the executor turns it into a sharp
 * pipeline.
 */
export interface TransformPlan {
  /** Size of the decoded, oriented image. */
  source: { width: number; height: number };
  /** Size after the shorter-side resize; undefined: no resize. */
  resize?: { width: number; height: number };
  /** Region cut from the (resized) image, within its bounds; undefined: all of it. */
  region?: Region;
  /** Zero padding around the region (a center crop larger than the image). */
  pad?: { top: number; bottom: number; left: number; right: number };
  /** Size the region is resized to (random-resized crop); undefined: as cut. */
  output?: { width: number; height: number };
  flip: boolean;
  /** Size of the result. */
  width: number;
  height: number;
}

/** Size with the shorter side `size` and the longer one scaled and rounded down. @internal */
export function shorterSideTo(
  size: number,
  width: number,
  height: number,
): { width: number; height: number } {
  if (width <= height) {
    return { width: size, height: Math.max(1, Math.floor((size * height) / width)) };
  }
  return { width: Math.max(1, Math.floor((size * width) / height)), height: size };
}

/**
 * Cuts `crop` from the plan's current image (its `width x height`, after any resize), drawing a
 * random-resized crop's window from `random`. @internal
 */
export function applyCrop(plan: TransformPlan, crop: CropSpec, random: SampleRandom): void {
  const w = plan.width;
  const h = plan.height;
  if (crop.kind === 'none') return;
  if (crop.kind === 'random-resized') {
    plan.region = randomResizedRegion(w, h, crop.scale, crop.ratio, random);
    plan.output = { width: crop.width, height: crop.height };
    plan.width = crop.width;
    plan.height = crop.height;
    return;
  }
  const padW = Math.max(0, crop.width - w);
  const padH = Math.max(0, crop.height - h);
  if (padW > 0 || padH > 0) {
    plan.pad = {
      left: Math.floor(padW / 2),
      right: Math.floor((padW + 1) / 2),
      top: Math.floor(padH / 2),
      bottom: Math.floor((padH + 1) / 2),
    };
  }
  const cw = Math.min(crop.width, w);
  const ch = Math.min(crop.height, h);
  if (cw !== w || ch !== h) {
    plan.region = {
      left: roundHalfEven((w - cw) / 2),
      top: roundHalfEven((h - ch) / 2),
      width: cw,
      height: ch,
    };
  }
  plan.width = crop.width;
  plan.height = crop.height;
}

/**
 * torchvision's RandomResizedCrop parameters: up to ten draws of an area share in `scale` and
 * a log-uniform aspect in `ratio`, the first that fits placed uniformly; otherwise the largest
 * central crop whose aspect is within `ratio`. @internal
 */
export function randomResizedRegion(
  width: number,
  height: number,
  scale: readonly [number, number],
  ratio: readonly [number, number],
  random: SampleRandom,
): Region {
  const area = width * height;
  const logRatio = [Math.log(ratio[0]), Math.log(ratio[1])] as const;
  for (let attempt = 0; attempt < 10; attempt++) {
    const targetArea = area * random.between(scale[0], scale[1]);
    const aspect = Math.exp(random.between(logRatio[0], logRatio[1]));
    const w = roundHalfEven(Math.sqrt(targetArea * aspect));
    const h = roundHalfEven(Math.sqrt(targetArea / aspect));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const top = random.integerTo(height - h);
      const left = random.integerTo(width - w);
      return { left, top, width: w, height: h };
    }
  }
  const inRatio = width / height;
  let w = width;
  let h = height;
  if (inRatio < ratio[0]) {
    h = Math.max(1, roundHalfEven(w / ratio[0]));
  } else if (inRatio > ratio[1]) {
    w = Math.max(1, roundHalfEven(h * ratio[1]));
  }
  return {
    left: Math.floor((width - w) / 2),
    top: Math.floor((height - h) / 2),
    width: w,
    height: h,
  };
}
