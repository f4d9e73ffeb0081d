import { z } from 'zod';

/** The limits and sizes of server-side transforms, validated with the rest of the configuration. */
export const transformLimitsSchema = z.object({
  /**
   * Largest image (width x height of its header) a transform decodes, and largest pixel buffer
   * its plan may make (the resized image, the output: a long image resized, a small one
   * upscaled); a larger one is refused before any pixel is allocated, as a decompression bomb
   * would be. The default is the limit above which PIL warns (about 9,459 x 9,459).
   */
  maxImagePixels: z
    .number()
    .int()
    .min(1)
    .max(2 ** 40)
    .default(89_478_485),
  /** Largest output side (resize, crop height and width) a request may ask for. */
  maxTransformSide: z.number().int().min(1).max(65_535).default(4096),
  /** Transforms the process runs at once; 0: one per CPU of the process's (cgroup) quota. */
  transformConcurrency: z.number().int().min(0).max(1024).default(0),
  /**
   * The native transform module for JPEG and 8-bit PNG raw output: `auto` when it is built,
   * `on` required (the process refuses to start without it), `off` sharp for every sample.
   */
  nativeTransforms: z.enum(['auto', 'on', 'off']).default('auto'),
  /** Transforms one stream runs at once; 0: as many as the process. */
  transformsPerStream: z.number().int().min(0).max(1024).default(0),
});

/** Validated transform limits. */
export type TransformLimits = z.infer<typeof transformLimitsSchema>;
