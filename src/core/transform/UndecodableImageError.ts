import { LoaderError } from '../errors/LoaderError.js';

/**
 * Why a sample could not be decoded (a label of the failures metric). `pixel_limit`: the image,
 * or a buffer its transform plan would allocate, is over the pixel limit; `too_many_scans`: a
 * JPEG with more scans than any encoder writes (each one a pass over the whole image);
 * `mask_missing` / `mask_size`: with masks asked for, a sample without a mask, or whose mask
 * is not its image's size.
 */
export type UndecodableReason =
  | 'empty'
  | 'unsupported_format'
  | 'pixel_limit'
  | 'too_many_scans'
  | 'truncated'
  | 'corrupt'
  | 'mask_missing'
  | 'mask_size';

/**
 * A sample whose bytes are not an image the transform can decode: DATA_LOSS, since the stored
 * sample is unusable as asked, with the reason for the metrics and the request's bad-image
 * policy to decide whether the stream ends.
 */
export class UndecodableImageError extends LoaderError {
  constructor(
    readonly reason: UndecodableReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('DATA_LOSS', message, options);
  }
}
