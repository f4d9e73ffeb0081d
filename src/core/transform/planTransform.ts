import { type SettingNames, settingName } from '../config/settingNames.js';
import { planSteps } from './steps.js';
import type { SampleRandom } from './SampleRandom.js';
import type { TransformPlan } from './geometry.js';
import type { TransformSpec } from './TransformSpec.js';
import { UndecodableImageError } from './UndecodableImageError.js';

export { type Region, type TransformPlan, randomResizedRegion, shorterSideTo } from './geometry.js';

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
  names?: SettingNames,
): TransformPlan {
  const plan: TransformPlan = { source: { width, height }, flip: false, width, height };
  // Each step's part in order (see steps.ts): resize, crop, flip.
  planSteps(plan, spec, random);
  refuseOverLimit(plan, maxPixels, names);
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

function refuseOverLimit(plan: TransformPlan, maxPixels: number, names?: SettingNames): void {
  for (const [name, { width, height }] of planBuffers(plan)) {
    if (width * height <= maxPixels) continue;
    throw new UndecodableImageError(
      'pixel_limit',
      `the transform's ${name} would be ${width}x${height} (from a ${plan.source.width}x` +
        `${plan.source.height} image), over the server's limit of ${maxPixels} pixels` +
        `, set by ${settingName(names, 'maxImagePixels')}`,
    );
  }
}
