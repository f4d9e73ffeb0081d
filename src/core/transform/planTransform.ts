import { roundHalfEven } from './roundHalfEven.js';
import type { SampleRandom } from './SampleRandom.js';
import type { CropSpec, TransformSpec } from './TransformSpec.js';
import { UndecodableImageError } from './UndecodableImageError.js';

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

/**
 * Plans a sample's transform for an oriented image of `width x height`, drawing the random
 * crop and the flip from `random` (in that order). The sizes follow torchvision: the resize's
 * longer side rounds down, crop offsets and random-resized sizes round half to even.
 *
 * Every pixel buffer the plan implies (source, resized image, output) must hold at most
 * `maxPixels`: a request's sizes are bounded, but a resize of a long, thin image is not (a
 * 65,500 x 1,360 source resized to a shorter side of 4,096 is 197,270 x 4,096, 2.4 GB as RGB),
 * nor is an upscale of a tiny one. Both executors size their buffers from the plan, so a plan
 * that passes here allocates no more than the limit per buffer.
 *
 * @throws {@link UndecodableImageError} `pixel_limit` (the bad-image policy's, as for a source
 *   over the limit) naming the buffer that would be over it.
 * @internal
 */
export function planTransform(
  spec: Pick<TransformSpec, 'resize' | 'crop' | 'flipProbability'>,
  width: number,
  height: number,
  random: SampleRandom,
  maxPixels: number,
): TransformPlan {
  const plan: TransformPlan = { source: { width, height }, flip: false, width, height };
  let w = width;
  let h = height;
  if (spec.resize > 0) {
    ({ width: w, height: h } = shorterSideTo(spec.resize, width, height));
    plan.resize = { width: w, height: h };
  }
  applyCrop(plan, spec.crop, w, h, random);
  plan.flip = spec.flipProbability > 0 && random.uniform() < spec.flipProbability;
  refuseOverLimit(plan, maxPixels);
  return plan;
}

/**
 * The largest pixel buffer of a plan: the source, the resized image, the region's resize and
 * the (padded) result. A cut region is never larger than the image it is cut from. It is what a
 * transform of the plan costs at most per pass, so it also decides whether a transform is
 * small enough to run on the event loop. @internal
 */
export function largestPlanPixels(plan: TransformPlan): number {
  return Math.max(...planBuffers(plan).map(([, s]) => s.width * s.height));
}

function planBuffers(plan: TransformPlan): [string, { width: number; height: number }][] {
  const buffers: [string, { width: number; height: number }][] = [['source image', plan.source]];
  if (plan.resize) buffers.push(['resized image', plan.resize]);
  if (plan.output) buffers.push(['resized crop', plan.output]);
  buffers.push(['output', plan]);
  return buffers;
}

function refuseOverLimit(plan: TransformPlan, maxPixels: number): void {
  for (const [name, { width, height }] of planBuffers(plan)) {
    if (width * height <= maxPixels) continue;
    throw new UndecodableImageError(
      'pixel_limit',
      `the transform's ${name} would be ${width}x${height} (from a ${plan.source.width}x` +
        `${plan.source.height} image), over the server's limit of ${maxPixels} pixels ` +
        '(SCYLLA_LOADER_MAX_IMAGE_PIXELS)',
    );
  }
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

function applyCrop(
  plan: TransformPlan,
  crop: CropSpec,
  w: number,
  h: number,
  random: SampleRandom,
): void {
  plan.width = w;
  plan.height = h;
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
