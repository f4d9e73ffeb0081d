import sharp, { type KernelEnum, type Metadata, type Sharp } from 'sharp';
import { type SettingNames, settingName } from '../config/settingNames.js';
import { LoaderError } from '../errors/LoaderError.js';
import type { NativeTransformModule } from './nativeTransform.js';
import { MAX_JPEG_SCANS, countJpegScans, isJpeg } from './jpegScans.js';
import { type TransformPlan, largestPlanPixels, planTransform } from './planTransform.js';
import { isTruncated } from './truncation.js';
import type { SampleRandom } from './SampleRandom.js';
import type { MaskTarget } from './maskGeometry.js';
import type { Interpolation, TransformSpec } from './TransformSpec.js';
import { type UndecodableReason, UndecodableImageError } from './UndecodableImageError.js';

/** One transformed sample. */
export interface TransformedImage {
  /** Raw pixels (height x width x channels, uint8) or the re-encoded image. */
  data: Buffer;
  width: number;
  height: number;
  channels: number;
  /** Pixels of the decoded, oriented source image. */
  sourcePixels: number;
  /** Which path decoded it: the native module, or sharp (libvips). */
  decoder: Decoder;
  /** Where the work ran: on the calling thread (a small plan) or libuv's thread pool. */
  thread: TransformThread;
  /** The geometry its mask (if any) follows: stored size, EXIF orientation, plan. */
  target: MaskTarget;
}

/** Where a transform ran (a label of the transform metrics). */
export type TransformThread = 'loop' | 'pool';

/** The two decoding paths (a label of the transform metrics). */
export type Decoder = 'native' | 'sharp';

/**
 * Largest plan (its largest pixel buffer: source, resized image or output, see
 * `largestPlanPixels`) the native path transforms on the calling thread rather than the thread
 * pool: 128 x 128, at most about 0.1 ms of work, so the event loop is never held long. A small
 * source is not enough: a 28 x 28 image upscaled to 4,096 x 4,096 is 16.8 M pixels of resize.
 * @internal
 */
export const SYNC_MAX_PIXELS = 128 * 128;

const NATIVE_REASONS: ReadonlySet<string> = new Set<UndecodableReason>([
  'corrupt',
  'truncated',
  'pixel_limit',
  'unsupported_format',
  'too_many_scans',
]);

/**
 * Raster formats a transform decodes. Vector and document formats (SVG, PDF) are refused: their
 * pixel count is whatever they ask to be rendered at, and rendering is open-ended work.
 */
const DECODABLE_FORMATS: ReadonlySet<string> = new Set([
  'jpeg',
  'png',
  'webp',
  'gif',
  'tiff',
  'avif',
  'heif',
  'jp2',
  'jxl',
]);

const KERNELS: Record<Interpolation, KernelEnum[keyof KernelEnum]> = {
  bilinear: 'linear',
  bicubic: 'cubic',
  lanczos3: 'lanczos3',
  nearest: 'nearest',
};

/**
 * Decodes and transforms one sample with sharp, off the event loop (libvips runs on libuv's
 * thread pool). The header is read first: an image over `maxPixels` is refused before any
 * pixel is allocated (a decompression bomb), a JPEG or PNG without its end is refused, and the
 * oriented size plans the crop, refused when a buffer of the plan (the resized image, the output)
 * would be over `maxPixels`. A JPEG of more than {@link MAX_JPEG_SCANS} scans is refused on
 * either path before it is decoded. Then one sharp pipeline does orientation, resize, crop, flip,
 * colour conversion and output; a conversion that must come first (alpha, colour to grey) and a
 * resize followed by a random-resized crop (two resizes) each add a pipeline before it.
 *
 * @throws {@link UndecodableImageError} for bytes that are not a decodable image (empty,
 *   unsupported format, over the pixel limit or a plan over it, too many JPEG scans, corrupt or
 *   truncated).
 * @internal
 */
export async function transformImage(
  data: Buffer,
  spec: TransformSpec,
  random: SampleRandom,
  maxPixels: number,
  native?: NativeTransformModule,
  names?: SettingNames,
): Promise<TransformedImage> {
  if (data.length === 0) throw new UndecodableImageError('empty', 'the sample has no bytes');
  // Before either decoder reads it: each scan is a pass over the whole image's coefficients.
  if (isJpeg(data)) {
    const scans = countJpegScans(data, MAX_JPEG_SCANS);
    if (scans > MAX_JPEG_SCANS) {
      throw new UndecodableImageError(
        'too_many_scans',
        `the JPEG has more than ${MAX_JPEG_SCANS} scans (encoders write about 10); decoding ` +
          'it would take CPU out of proportion to its size',
      );
    }
  }
  if (native && spec.output.format === 'raw') {
    const done = await transformNative(native, data, spec, random, maxPixels, names);
    if (done) return done;
  }
  let meta: Metadata;
  try {
    // The header only: no pixel is decoded, so the limit below can name the image's size.
    meta = await sharp(data, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw undecodable(err);
  }
  if (!DECODABLE_FORMATS.has(meta.format)) {
    throw new UndecodableImageError(
      'unsupported_format',
      `${meta.format} is not a format transforms decode (${[...DECODABLE_FORMATS].join(', ')})`,
    );
  }
  if (meta.width * meta.height > maxPixels) {
    throw new UndecodableImageError(
      'pixel_limit',
      `the image is ${meta.width}x${meta.height}, over the server's limit of ${maxPixels} pixels` +
        `, set by ${settingName(names, 'maxImagePixels')}`,
    );
  }
  if (isTruncated(data, meta.format)) {
    throw new UndecodableImageError(
      'truncated',
      `the ${meta.format} image is truncated (its end marker is missing)`,
    );
  }
  const plan = planTransform(
    spec,
    meta.autoOrient.width,
    meta.autoOrient.height,
    random,
    maxPixels,
    names,
  );
  let out: Omit<TransformedImage, 'sourcePixels' | 'decoder' | 'thread' | 'target'>;
  try {
    // Channels are converted before anything else, as the trainer's decoders do (`convert('RGB')`
    // or `convert('L')` first): resizing with alpha would blend colours by their alpha, and grey
    // made after a resize rounds differently from grey made before it.
    const convertFirst = meta.hasAlpha || (spec.channels === 1 && meta.channels >= 3);
    out = await runPlan(data, convertFirst, plan, spec, maxPixels);
  } catch (err) {
    throw undecodable(err);
  }
  // Raw samples are laid out as one tensor: a size other than planned would corrupt the batch.
  // The length is what counts: sharp reports the size before padding when padding follows a
  // crop after a resize, though the pixels are padded.
  if (
    spec.output.format === 'raw' &&
    (out.channels !== spec.channels || out.data.length !== plan.width * plan.height * spec.channels)
  ) {
    throw new LoaderError(
      'INTERNAL',
      `transform produced ${out.data.length} bytes of ${out.channels} channels, planned ` +
        `${plan.width}x${plan.height}x${spec.channels}`,
    );
  }
  const target = {
    storedWidth: meta.width,
    storedHeight: meta.height,
    orientation: meta.orientation ?? 1,
    plan,
  };
  return {
    ...out,
    sourcePixels: meta.width * meta.height,
    decoder: 'sharp',
    thread: 'pool',
    target,
  };
}

/**
 * The native path, for raw output of the JPEGs and 8-bit PNGs the module's header check
 * accepts; undefined for any other image (sharp then transforms it). The plan is drawn from
 * `random` exactly as on the sharp path, so both paths cut the same window and flip alike.
 */
async function transformNative(
  native: NativeTransformModule,
  data: Buffer,
  spec: TransformSpec,
  random: SampleRandom,
  maxPixels: number,
  names: SettingNames | undefined,
): Promise<TransformedImage | undefined> {
  let probe;
  try {
    probe = native.probe(data);
  } catch {
    // A header the module cannot read: sharp reads it, or says why it cannot.
    return undefined;
  }
  if (!probe.native) return undefined;
  const pixels = probe.width * probe.height;
  if (pixels > maxPixels) {
    throw new UndecodableImageError(
      'pixel_limit',
      `the image is ${probe.width}x${probe.height}, over the server's limit of ${maxPixels} ` +
        `pixels, set by ${settingName(names, 'maxImagePixels')}`,
    );
  }
  // Orientations 5-8 turn the image a quarter: the plan is made in oriented coordinates.
  const turned = probe.orientation >= 5;
  const plan = planTransform(
    spec,
    turned ? probe.height : probe.width,
    turned ? probe.width : probe.height,
    random,
    maxPixels,
    names,
  );
  const out = Buffer.allocUnsafe(plan.width * plan.height * spec.channels);
  const nativePlan = {
    ...plan,
    channels: spec.channels,
    interpolation: spec.interpolation,
    maxPixels,
    maxScans: MAX_JPEG_SCANS,
  };
  const onLoop = largestPlanPixels(plan) <= SYNC_MAX_PIXELS;
  try {
    // A small transform costs less than the hop to the thread pool and back (a 28 x 28 PNG:
    // about 11 us, the hop several times that): it runs here, on the calling thread. Small
    // means every buffer of the plan, not only the source (an upscale is the work of its output).
    if (onLoop) native.transform(data, nativePlan, out, 0);
    else await native.transformAsync(data, nativePlan, out, 0);
  } catch (err) {
    throw nativeError(err, probe.format);
  }
  return {
    data: out,
    width: plan.width,
    height: plan.height,
    channels: spec.channels,
    sourcePixels: pixels,
    decoder: 'native',
    thread: onLoop ? 'loop' : 'pool',
    target: {
      storedWidth: probe.width,
      storedHeight: probe.height,
      orientation: probe.orientation,
      plan,
    },
  };
}

/** The module's `reason: message` errors as the policy's reasons; anything else is a bug. */
function nativeError(err: unknown, format: string): Error {
  const message = err instanceof Error ? err.message : String(err);
  const colon = message.indexOf(':');
  const reason = colon > 0 ? message.slice(0, colon) : '';
  if (!NATIVE_REASONS.has(reason)) {
    return new LoaderError('INTERNAL', `native ${format} transform failed: ${message}`, {
      cause: err,
    });
  }
  const detail = message.slice(colon + 1).trim();
  return new UndecodableImageError(
    reason as UndecodableReason,
    reason === 'truncated'
      ? `the ${format} image is truncated (${detail})`
      : `the image cannot be decoded: ${detail}`,
    { cause: err },
  );
}

async function runPlan(
  data: Buffer,
  convertFirst: boolean,
  plan: TransformPlan,
  spec: TransformSpec,
  maxPixels: number,
): Promise<Omit<TransformedImage, 'sourcePixels' | 'decoder' | 'thread' | 'target'>> {
  const kernel = KERNELS[spec.interpolation];
  // Resizes keep `fastShrinkOnLoad` off: libjpeg's reduced-size decoding is then used only for
  // a shrink of 4x or more and leaves at least 2x to the resize kernel, so the pixels stay close
  // to a full decode (what trainers' own decoders do) while a large photo still decodes fast.
  // A crop before the resize (the random-resized crop) decodes in full.
  const resizeOptions = { fit: 'fill', kernel, fastShrinkOnLoad: false } as const;
  // Stages whose raw pixels feed the next pipeline, where sharp's fixed order of operations
  // differs from the plan's: a conversion of channels that must come first (`convertFirst`),
  // and a resize before a random-resized crop (sharp resizes once per pipeline).
  let raw: { data: Buffer; width: number; height: number; channels: 1 | 3 } | undefined;
  const open = (): Sharp =>
    raw
      ? // A stage is the plan's source or resized image, both within the limit (planTransform).
        sharp(raw.data, {
          raw: { width: raw.width, height: raw.height, channels: raw.channels },
          limitInputPixels: maxPixels,
        })
      : // `failOn: 'warning'`: a truncated JPEG only warns in libjpeg, and grey-filled pixels
        // are data loss the policy must see, not a sample to train on.
        sharp(data, { limitInputPixels: maxPixels, failOn: 'warning' }).autoOrient();
  const stage = async (img: Sharp): Promise<void> => {
    const { data: px, info } = await toChannels(img, spec.channels)
      .raw()
      .toBuffer({ resolveWithObject: true });
    raw = { data: px, width: info.width, height: info.height, channels: spec.channels };
  };
  if (convertFirst) await stage(open());
  if (plan.resize && plan.output) {
    await stage(open().resize(plan.resize.width, plan.resize.height, resizeOptions));
  }
  let img = open();
  if (plan.resize && !plan.output) {
    img = img.resize(plan.resize.width, plan.resize.height, resizeOptions);
  }
  const { region, pad, output } = plan;
  // sharp mirrors after its resize but before a crop that follows the resize, and before
  // padding: where the mirror comes first, the crop window and the padding are mirrored so the
  // result is the plan's (crop, then pad, then mirror).
  const mirrorRegion = plan.flip && plan.resize !== undefined && output === undefined;
  if (region) {
    const regionWidth = plan.resize && !output ? plan.resize.width : undefined;
    img = img.extract(
      mirrorRegion && regionWidth !== undefined
        ? { ...region, left: regionWidth - region.left - region.width }
        : region,
    );
  }
  if (output) img = img.resize(output.width, output.height, resizeOptions);
  if (pad) {
    img = img.extend({
      top: pad.top,
      bottom: pad.bottom,
      left: plan.flip ? pad.right : pad.left,
      right: plan.flip ? pad.left : pad.right,
      background: { r: 0, g: 0, b: 0, alpha: 1 },
    });
  }
  if (plan.flip) img = img.flop();
  // Also after a stage: sharp writes sRGB unless told otherwise, whatever its input.
  img = toChannels(img, spec.channels);
  const encoded =
    spec.output.format === 'raw'
      ? img.raw()
      : spec.output.format === 'jpeg'
        ? img.jpeg({ quality: spec.output.quality })
        : img.webp({ quality: spec.output.quality });
  const { data: out, info } = await encoded.toBuffer({ resolveWithObject: true });
  return { data: out, width: plan.width, height: plan.height, channels: info.channels };
}

function toChannels(img: Sharp, channels: 1 | 3): Sharp {
  return channels === 1
    ? img.removeAlpha().toColourspace('b-w')
    : img.removeAlpha().toColourspace('srgb');
}

function undecodable(err: unknown): UndecodableImageError {
  if (err instanceof UndecodableImageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  let reason: UndecodableReason = 'corrupt';
  if (/pixel limit/i.test(message)) reason = 'pixel_limit';
  else if (/unsupported image format/i.test(message)) reason = 'unsupported_format';
  return new UndecodableImageError(reason, `the image cannot be decoded: ${message.trim()}`, {
    cause: err,
  });
}
