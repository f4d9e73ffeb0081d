export type { CropSpec, Interpolation, OutputSpec } from './stepSpecs.js';
export type { TransformSpec } from './steps.js';
import type { TransformSpec } from './steps.js';

/**
 * Height, width and channels of every output sample when the output is a raw tensor with a
 * fixed shape (a crop is set); undefined otherwise.
 */
export function rawSampleShape(spec: TransformSpec): [number, number, number] | undefined {
  if (spec.output.format !== 'raw' || spec.crop.kind === 'none') return undefined;
  return [spec.crop.height, spec.crop.width, spec.channels];
}
