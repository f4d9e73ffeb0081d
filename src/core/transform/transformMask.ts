import sharp, { type OutputInfo } from 'sharp';
import { decodeMaskPng, isIndexedMaskPng, readPngHeader } from './decodeMaskPng.js';
import { type MaskTarget, sampleMask } from './maskGeometry.js';
import type { NativeTransformModule } from './nativeTransform.js';
import { SYNC_MAX_PIXELS } from './transformImage.js';
import { UndecodableImageError } from './UndecodableImageError.js';

/** Which path transformed a mask. */
export type MaskDecoder = 'native' | 'js' | 'sharp';

/**
 * Transforms a sample's mask as its image was: every geometric step of `target.plan` (and the
 * image's EXIF orientation) by nearest neighbour, one byte per pixel (`plan.width x
 * plan.height`). An 8-bit grey or palette PNG goes to the native module when it is loaded;
 * one of 1 to 8 bits is otherwise decoded here (palette indices, not colours); anything else
 * sharp decodes, keeping its first channel as 8-bit values. A mask's own EXIF orientation is
 * ignored: it follows its image's.
 *
 * @throws {@link UndecodableImageError} for a missing or undecodable mask, one over the pixel
 *   limit, or one whose size is not its image's (naming both).
 * @internal
 */
export async function transformMask(
  data: Buffer | undefined,
  target: MaskTarget,
  maxPixels: number,
  native?: NativeTransformModule,
): Promise<{ data: Buffer; decoder: MaskDecoder }> {
  if (!data || data.length === 0) {
    throw new UndecodableImageError('mask_missing', 'the sample has no mask (no label blob)');
  }
  const { plan } = target;
  const out = Buffer.allocUnsafe(plan.width * plan.height);
  const png = readPngHeader(data);
  if (png) checkSize(png.width, png.height, target, maxPixels);
  // As the image's: a small mask costs less than the hop to the thread pool.
  const small = png !== undefined && png.width * png.height <= SYNC_MAX_PIXELS;
  if (png && native?.transformMask && png.bitDepth === 8 && isIndexedMaskPng(png)) {
    // The image's plan as the module takes it; a mask has one channel and is never blended.
    const nativePlan = {
      ...plan,
      channels: 1 as const,
      interpolation: 'nearest' as const,
      maxPixels,
    };
    try {
      if (small || !native.transformMaskAsync) {
        native.transformMask(data, nativePlan, target.orientation, out, 0);
      } else {
        await native.transformMaskAsync(data, nativePlan, target.orientation, out, 0);
      }
    } catch (err) {
      throw nativeMaskError(err);
    }
    return { data: out, decoder: 'native' };
  }
  if (png && isIndexedMaskPng(png)) {
    const pixels = await decodeMaskPng(data, png, small);
    sampleMask(pixels, png.width, png.height, target.orientation, plan, out, 0);
    return { data: out, decoder: 'js' };
  }
  let decoded: { data: Buffer; info: OutputInfo };
  try {
    const meta = await sharp(data, { limitInputPixels: false }).metadata();
    checkSize(meta.width, meta.height, target, maxPixels);
    decoded = await sharp(data, { limitInputPixels: maxPixels, failOn: 'warning' })
      .extractChannel(0)
      .raw({ depth: 'uchar' })
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    if (err instanceof UndecodableImageError) throw err;
    throw new UndecodableImageError(
      'corrupt',
      `the mask cannot be decoded: ${(err as Error).message.trim()}`,
      { cause: err },
    );
  }
  sampleMask(
    decoded.data,
    target.storedWidth,
    target.storedHeight,
    target.orientation,
    plan,
    out,
    0,
  );
  return { data: out, decoder: 'sharp' };
}

function checkSize(width: number, height: number, target: MaskTarget, maxPixels: number): void {
  if (width !== target.storedWidth || height !== target.storedHeight) {
    throw new UndecodableImageError(
      'mask_size',
      `the mask is ${width}x${height}, its image ${target.storedWidth}x${target.storedHeight} ` +
        '(as stored): a mask must have its image size',
    );
  }
  if (width * height > maxPixels) {
    throw new UndecodableImageError(
      'pixel_limit',
      `the mask is ${width}x${height}, over the server's limit of ${maxPixels} pixels`,
    );
  }
}

function nativeMaskError(err: unknown): UndecodableImageError {
  const message = err instanceof Error ? err.message : String(err);
  const reason = message.startsWith('truncated:') ? 'truncated' : 'corrupt';
  return new UndecodableImageError(reason, `the png mask cannot be decoded: ${message}`, {
    cause: err,
  });
}
