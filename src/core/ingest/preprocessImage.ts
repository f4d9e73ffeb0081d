import sharp from 'sharp';

/** Image preprocessing applied at ingest, as the reference papers did for ImageNet. */
export interface PreprocessOptions {
  /** Resize so the shorter side has this many pixels, keeping the aspect ratio. */
  resizeShorter?: number;
  /** Center-crop to this size after resizing. */
  crop?: { width: number; height: number };
  /** JPEG quality of the re-encoded image (1-100). */
  quality: number;
}

/**
 * Decodes an image, resizes its shorter side, center-crops it and re-encodes it as JPEG. With
 * a crop but no resize, the image is first scaled so the crop fits (cover), which is the same
 * as resizing the shorter side to the crop's larger dimension. Throws when sharp cannot decode
 * the input.
 */
export async function preprocessImage(input: Buffer, options: PreprocessOptions): Promise<Buffer> {
  const meta = await sharp(input).metadata();
  if (!meta.width || !meta.height) throw new Error('image has no dimensions');
  let width = meta.width;
  let height = meta.height;
  const crop = options.crop;
  const shorter =
    options.resizeShorter ?? (crop ? Math.max(crop.width, crop.height) : Math.min(width, height));
  const scale = shorter / Math.min(width, height);
  width = Math.max(1, Math.round(width * scale));
  height = Math.max(1, Math.round(height * scale));
  if (crop && (crop.width > width || crop.height > height)) {
    throw new Error(
      `crop ${crop.width}x${crop.height} is larger than the resized ${width}x${height}`,
    );
  }
  let pipeline = sharp(input).resize(width, height, { fit: 'fill' });
  if (crop) {
    pipeline = pipeline.extract({
      left: Math.floor((width - crop.width) / 2),
      top: Math.floor((height - crop.height) / 2),
      width: crop.width,
      height: crop.height,
    });
  }
  return pipeline.jpeg({ quality: options.quality }).toBuffer();
}
