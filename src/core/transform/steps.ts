import { invalidArgument } from '../errors/LoaderError.js';
import { applyCrop, shorterSideTo, type TransformPlan } from './geometry.js';
import type { SampleRandom } from './SampleRandom.js';
import type { CropSpec, Interpolation, OutputSpec } from './stepSpecs.js';

/**
 * The one description of a server-side transform: its steps in the order they apply, each with
 * its fields (as the proto, the TypeScript SDK and the Python client name them), its validation
 * of a request and its part of a sample's plan. `validateTransformRequest` and `planTransform`
 * run the steps in order; the proto's `Transform` message, the SDK's `TransformOptions` /
 * `toProtoTransform` and the Python client's `Transform` are checked against the fields by
 * tests (`test/unit/transformSteps.test.ts`, and the Python suite through
 * `transform_steps.json`, written from {@link transformStepsJson}).
 *
 * A new step: its native (and sharp) execution, and an entry here; the tests then name every
 * file that lacks its fields.
 */

/**
 * The request's transform as the wire carries it: proto `Transform` with camelCase names, every
 * scalar filled (0 when unset), enums by value name, the crop's oneof named by `crop`.
 */
export interface TransformRequest {
  channels: number;
  resize: number;
  crop?: 'centerCrop' | 'randomResizedCrop';
  centerCrop?: { height: number; width: number } | null;
  randomResizedCrop?: {
    height: number;
    width: number;
    scaleMin: number;
    scaleMax: number;
    ratioMin: number;
    ratioMax: number;
  } | null;
  horizontalFlip: number;
  interpolation: string;
  output: string;
  quality: number;
  badImagePolicy: string;
  masks: boolean;
}

/** What a request is validated against. */
export interface TransformRequestLimits {
  /** The request's batch size: a raw batch must fit one response. */
  batchSize: number;
  /** Largest side of a resize or crop. */
  maxTransformSide: number;
  /** Largest response, bytes. */
  maxMessageBytes: number;
  /**
   * How messages name the two limits (the server gives the variables that set them); default:
   * their names here.
   */
  settingNames?: { maxTransformSide?: string; maxMessageBytes?: string };
}

/** A proto enum of the transform: its value names are `prefix` + the upper-case names. */
export interface TransformEnum {
  protoEnum: string;
  /** `INTERPOLATION_`: `bilinear` is `INTERPOLATION_BILINEAR`, unset is `..._UNSPECIFIED`. */
  prefix: string;
  /** The names both SDKs take, in the proto's order (value 1 first). */
  values: readonly string[];
  /** What `..._UNSPECIFIED` (0) means. */
  unspecified: string;
}

/** A field of a nested message (a crop's). */
export interface TransformSubField {
  /** Its proto field, or the two of a `[min, max]` range (`scale_min`, `scale_max`). */
  proto: readonly string[];
  /** Their numbers in the nested message. */
  numbers: readonly number[];
  /** The TypeScript SDK's key and the Python client's attribute. */
  sdk: string;
  python: string;
  type: 'uint32' | 'range';
  /** Required by both SDKs (a crop's size); a range is optional (0 means its default). */
  required: boolean;
}

/** How a field is typed on the wire. */
export type TransformFieldType =
  | { kind: 'uint32' }
  | { kind: 'double' }
  | { kind: 'bool' }
  | ({ kind: 'enum' } & TransformEnum)
  | {
      kind: 'message';
      protoMessage: string;
      /** The oneof it belongs to (one field of a oneof may be given). */
      oneof?: string;
      fields: readonly TransformSubField[];
      /**
       * How the Python client takes it: a tuple of the sub-fields in order (`center_crop=(h,
       * w)`) or a dataclass named `protoMessage` with the sub-fields as attributes.
       */
      python: 'tuple' | 'dataclass';
    };

/** A field of proto `Transform`. */
export interface TransformField {
  /** Proto field name and number. */
  proto: string;
  number: number;
  /** The TypeScript SDK's `TransformOptions` key and the Python client's `Transform` attribute. */
  sdk: string;
  python: string;
  type: TransformFieldType;
  /** The key of the validated spec this field's value goes to (absent: merged into another). */
  spec?: string;
}

/**
 * One step: its fields, how a request's values become the validated spec's (`Out`), and, for
 * a step with geometry, its part of a sample's plan (drawing from `random` in step order).
 */
export interface TransformStep<Out extends object> {
  name: string;
  /** What the step does, in a line. */
  summary: string;
  fields: readonly TransformField[];
  /** @throws INVALID_ARGUMENT naming the field, the value and the allowed range. */
  validate(t: TransformRequest, limits: TransformRequestLimits): Out;
  /** Its part of the plan, on the plan so far (`width x height` is the current image). */
  plan?(plan: TransformPlan, spec: Out, random: SampleRandom): void;
}

function step<Out extends object>(s: TransformStep<Out>): TransformStep<Out> {
  return s;
}

const uint32 = { kind: 'uint32' } as const;
const double = { kind: 'double' } as const;

function enumType(e: TransformEnum): TransformFieldType {
  return { kind: 'enum', ...e };
}

/** Wire value names to the names the spec and SDKs use, `..._UNSPECIFIED` first. */
export function enumTable(e: TransformEnum): Record<string, string> {
  return Object.fromEntries([
    [`${e.prefix}UNSPECIFIED`, e.unspecified],
    ...e.values.map((v) => [`${e.prefix}${v.toUpperCase()}`, v]),
  ]);
}

function lookup(e: TransformEnum, value: string, field: string): string {
  const table = enumTable(e);
  const v = table[value];
  if (v === undefined) {
    throw invalidArgument(`unknown ${field} ${value}; use one of ${Object.keys(table).join(', ')}`);
  }
  return v;
}

function sideName(limits: TransformRequestLimits): string {
  return limits.settingNames?.maxTransformSide ?? 'maxTransformSide';
}

function checkSide(field: string, value: number, limits: TransformRequestLimits): void {
  const side = limits.maxTransformSide;
  if (value < 1 || value > side) {
    throw invalidArgument(
      `${field} ${value} is out of range: use 1 to ${side} (the server limit, ${sideName(limits)})`,
    );
  }
}

/** The crop the request asks for, as the oneof carries it. */
function requestedCrop(t: TransformRequest): { height: number; width: number } | undefined {
  if (t.crop === 'centerCrop' && t.centerCrop) return t.centerCrop;
  if (t.crop === 'randomResizedCrop' && t.randomResizedCrop) return t.randomResizedCrop;
  return undefined;
}

const BAD_IMAGE: TransformEnum = {
  protoEnum: 'BadImagePolicy',
  prefix: 'BAD_IMAGE_POLICY_',
  values: ['fail', 'skip'],
  unspecified: 'fail',
};

const INTERPOLATION: TransformEnum = {
  protoEnum: 'Interpolation',
  prefix: 'INTERPOLATION_',
  values: ['bilinear', 'bicubic', 'lanczos3', 'nearest'],
  unspecified: 'bilinear',
};

const OUTPUT: TransformEnum = {
  protoEnum: 'TransformOutput',
  prefix: 'TRANSFORM_OUTPUT_',
  values: ['raw', 'jpeg', 'webp'],
  unspecified: 'raw',
};

const side = (name: string, number: number): TransformSubField => ({
  proto: [name],
  numbers: [number],
  sdk: name,
  python: name,
  type: 'uint32',
  required: true,
});

/** Decode, EXIF orientation applied, to `channels`; what an undecodable sample does. */
const decodeStep = step<{
  channels: 1 | 3;
  /** An undecodable sample: `fail` ends the stream with DATA_LOSS, `skip` counts and drops it. */
  badImage: 'fail' | 'skip';
}>({
  name: 'decode',
  summary: 'decode with EXIF orientation applied, to 1 (grey) or 3 (RGB) channels',
  fields: [
    {
      proto: 'channels',
      number: 1,
      sdk: 'channels',
      python: 'channels',
      type: uint32,
      spec: 'channels',
    },
    {
      proto: 'bad_image_policy',
      number: 9,
      sdk: 'badImagePolicy',
      python: 'bad_image',
      type: enumType(BAD_IMAGE),
      spec: 'badImage',
    },
  ],
  validate(t) {
    if (t.channels !== 1 && t.channels !== 3) {
      throw invalidArgument(
        `transform.channels ${t.channels} is not allowed: use 1 (grey) or 3 (RGB)`,
      );
    }
    const badImage = lookup(BAD_IMAGE, t.badImagePolicy, 'transform.bad_image_policy');
    return { channels: t.channels, badImage: badImage as 'fail' | 'skip' };
  },
});

/** Resize of the shorter side; how every resize picks its pixels. */
const resizeStep = step<{
  /** Shorter side after the resize, px; 0: no resize. */
  resize: number;
  interpolation: Interpolation;
}>({
  name: 'resize',
  summary: "resize the shorter side (the longer one rounds down, as torchvision's Resize)",
  fields: [
    { proto: 'resize', number: 2, sdk: 'resize', python: 'resize', type: uint32, spec: 'resize' },
    {
      proto: 'interpolation',
      number: 6,
      sdk: 'interpolation',
      python: 'interpolation',
      type: enumType(INTERPOLATION),
      spec: 'interpolation',
    },
  ],
  validate(t, limits) {
    if (t.resize > limits.maxTransformSide) {
      throw invalidArgument(
        `transform.resize ${t.resize} is out of range: use 0 (no resize) to ` +
          `${limits.maxTransformSide} (the server limit, ${sideName(limits)})`,
      );
    }
    const interpolation = lookup(INTERPOLATION, t.interpolation, 'transform.interpolation');
    return { resize: t.resize, interpolation: interpolation as Interpolation };
  },
  plan(plan, spec) {
    if (spec.resize <= 0) return;
    const size = shorterSideTo(spec.resize, plan.width, plan.height);
    plan.resize = size;
    plan.width = size.width;
    plan.height = size.height;
  },
});

/** A center crop (zero-padded) or torchvision's random-resized crop. */
const cropStep = step<{ crop: CropSpec }>({
  name: 'crop',
  summary: "center_crop (zero-padded) or random_resized_crop (torchvision's)",
  fields: [
    {
      proto: 'center_crop',
      number: 3,
      sdk: 'centerCrop',
      python: 'center_crop',
      type: {
        kind: 'message',
        protoMessage: 'CenterCrop',
        oneof: 'crop',
        fields: [side('height', 1), side('width', 2)],
        python: 'tuple',
      },
      spec: 'crop',
    },
    {
      proto: 'random_resized_crop',
      number: 4,
      sdk: 'randomResizedCrop',
      python: 'random_resized_crop',
      type: {
        kind: 'message',
        protoMessage: 'RandomResizedCrop',
        oneof: 'crop',
        fields: [
          side('height', 1),
          side('width', 2),
          {
            proto: ['scale_min', 'scale_max'],
            numbers: [3, 4],
            sdk: 'scale',
            python: 'scale',
            type: 'range',
            required: false,
          },
          {
            proto: ['ratio_min', 'ratio_max'],
            numbers: [5, 6],
            sdk: 'ratio',
            python: 'ratio',
            type: 'range',
            required: false,
          },
        ],
        python: 'dataclass',
      },
      spec: 'crop',
    },
  ],
  validate(t, limits) {
    if (t.crop === 'centerCrop' && t.centerCrop) {
      const { height, width } = t.centerCrop;
      checkSide('transform.center_crop.height', height, limits);
      checkSide('transform.center_crop.width', width, limits);
      return { crop: { kind: 'center', height, width } };
    }
    if (t.crop === 'randomResizedCrop' && t.randomResizedCrop) {
      const c = t.randomResizedCrop;
      checkSide('transform.random_resized_crop.height', c.height, limits);
      checkSide('transform.random_resized_crop.width', c.width, limits);
      const scaleMin = c.scaleMin === 0 ? 0.08 : c.scaleMin;
      const scaleMax = c.scaleMax === 0 ? 1 : c.scaleMax;
      if (!(scaleMin > 0 && scaleMin <= scaleMax && scaleMax <= 1)) {
        throw invalidArgument(
          `transform.random_resized_crop scale [${c.scaleMin}, ${c.scaleMax}] is not a range ` +
            'within (0, 1]: use 0 < scale_min <= scale_max <= 1 (0 means 0.08 and 1)',
        );
      }
      const ratioMin = c.ratioMin === 0 ? 3 / 4 : c.ratioMin;
      const ratioMax = c.ratioMax === 0 ? 4 / 3 : c.ratioMax;
      if (!(ratioMin > 0 && ratioMin <= ratioMax && Number.isFinite(ratioMax))) {
        throw invalidArgument(
          `transform.random_resized_crop ratio [${c.ratioMin}, ${c.ratioMax}] is not a range of ` +
            'aspect ratios: use 0 < ratio_min <= ratio_max (0 means 3/4 and 4/3)',
        );
      }
      return {
        crop: {
          kind: 'random-resized',
          height: c.height,
          width: c.width,
          scale: [scaleMin, scaleMax],
          ratio: [ratioMin, ratioMax],
        },
      };
    }
    return { crop: { kind: 'none' } };
  },
  plan(plan, spec, random) {
    applyCrop(plan, spec.crop, random);
  },
});

/** A horizontal flip with a probability. */
const flipStep = step<{
  /** Probability in [0, 1] that a sample is mirrored left to right. */
  flipProbability: number;
}>({
  name: 'flip',
  summary: 'mirror left to right with a probability',
  fields: [
    {
      proto: 'horizontal_flip',
      number: 5,
      sdk: 'horizontalFlip',
      python: 'horizontal_flip',
      type: double,
      spec: 'flipProbability',
    },
  ],
  validate(t) {
    if (!(t.horizontalFlip >= 0 && t.horizontalFlip <= 1)) {
      throw invalidArgument(
        `transform.horizontal_flip ${t.horizontalFlip} is not a probability: use 0 to 1`,
      );
    }
    return { flipProbability: t.horizontalFlip };
  },
  plan(plan, spec, random) {
    plan.flip = spec.flipProbability > 0 && random.uniform() < spec.flipProbability;
  },
});

/** Raw pixels (one tensor per batch), or re-encoded JPEG or WebP. */
const outputStep = step<{ output: OutputSpec }>({
  name: 'output',
  summary: 'raw uint8 pixels (needs a crop) or JPEG / WebP at a quality',
  fields: [
    {
      proto: 'output',
      number: 7,
      sdk: 'output',
      python: 'output',
      type: enumType(OUTPUT),
      spec: 'output',
    },
    { proto: 'quality', number: 8, sdk: 'quality', python: 'quality', type: uint32 },
  ],
  validate(t, limits) {
    const format = lookup(OUTPUT, t.output, 'transform.output') as OutputSpec['format'];
    if (format !== 'raw') {
      const quality = t.quality === 0 ? 90 : t.quality;
      if (quality > 100) {
        throw invalidArgument(
          `transform.quality ${t.quality} is out of range: use 1 to 100 (0: 90)`,
        );
      }
      return { output: { format, quality } };
    }
    if (t.quality !== 0) {
      throw invalidArgument(
        `transform.quality ${t.quality} applies to JPEG or WebP output only: leave it 0 for RAW`,
      );
    }
    const crop = requestedCrop(t);
    if (!crop) {
      throw invalidArgument(
        'transform.output RAW needs center_crop or random_resized_crop, so that every sample ' +
          'of a batch has the same shape; or ask for JPEG or WebP output',
      );
    }
    const { batchSize, maxMessageBytes } = limits;
    // A mask is one more byte per pixel, in the same response.
    const perPixel = t.channels + (t.masks ? 1 : 0);
    const sampleBytes = crop.height * crop.width * perPixel;
    if (batchSize * sampleBytes > maxMessageBytes - (1 << 20)) {
      const name = limits.settingNames?.maxMessageBytes ?? 'maxMessageBytes';
      const what = t.masks ? `samples with their ${crop.height}x${crop.width}x1 masks` : 'samples';
      throw invalidArgument(
        `a batch of ${batchSize} raw ${crop.height}x${crop.width}x${t.channels} ${what} is ` +
          `${batchSize * sampleBytes} bytes, over the server's response limit of ` +
          `${maxMessageBytes} bytes less 1 MiB for ids, labels and the token ` +
          `(${name}); use a batch size of at most ` +
          `${Math.max(1, Math.floor((maxMessageBytes - (1 << 20)) / sampleBytes))}`,
      );
    }
    return { output: { format } };
  },
});

/**
 * Label blobs as masks aligned with the images: every geometric step of the plan applies to
 * them too, with nearest-neighbour sampling (`transformMask.ts`), and they go out as a second
 * raw tensor. Absent from the spec when not asked for, so that resume tokens of streams
 * without masks keep their fingerprint.
 */
const masksStep = step<{ masks?: true }>({
  name: 'masks',
  summary: 'label blobs are masks: each geometric step follows them (nearest neighbour)',
  fields: [
    {
      proto: 'masks',
      number: 10,
      sdk: 'masks',
      python: 'masks',
      type: { kind: 'bool' },
      spec: 'masks',
    },
  ],
  validate(t) {
    if (!t.masks) return {};
    if (lookup(OUTPUT, t.output, 'transform.output') !== 'raw') {
      throw invalidArgument(
        'transform.masks needs RAW output (with center_crop or random_resized_crop), so that ' +
          'the masks of a batch form one tensor; JPEG or WebP output cannot carry them',
      );
    }
    return { masks: true };
  },
});

/** The steps, in the order they apply (and validate, and draw their random numbers). */
export const TRANSFORM_STEPS = [
  decodeStep,
  resizeStep,
  cropStep,
  flipStep,
  outputStep,
  masksStep,
] as const;

type StepOut<S> = S extends TransformStep<infer O> ? O : never;
type Intersect<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void
  ? I
  : never;

/**
 * A validated server-side transform: every step's validated fields (decode with EXIF
 * orientation to `channels`, resize of the shorter side, crop, horizontal flip with a
 * probability, output). Every random choice is a pure function of (seed, epoch, sample id).
 */
export type TransformSpec = {
  [K in keyof Intersect<StepOut<(typeof TRANSFORM_STEPS)[number]>>]: Intersect<
    StepOut<(typeof TRANSFORM_STEPS)[number]>
  >[K];
};

/** Every field of proto `Transform`, in field number order. */
export function transformFields(): TransformField[] {
  return TRANSFORM_STEPS.flatMap((s) => s.fields).sort((a, b) => a.number - b.number);
}

/**
 * A request's transform, validated step by step: INVALID_ARGUMENT names the field, the value
 * and the allowed range. Defaults follow the proto (unspecified enums, a quality of 0, and the
 * random-resized crop's 0 ranges mean their documented values). A raw output needs a crop, so
 * that every sample of a batch has one shape, and a batch of it must fit one response.
 *
 * The spec's keys come in the order of the proto fields that give them: resume tokens
 * fingerprint the spec as JSON, so the order is part of every token issued.
 */
export function validateTransformRequest(
  t: TransformRequest,
  limits: TransformRequestLimits,
): TransformSpec {
  const parts: Record<string, unknown> = {};
  for (const s of TRANSFORM_STEPS) Object.assign(parts, s.validate(t, limits));
  const spec: Record<string, unknown> = {};
  for (const field of transformFields()) {
    // A step may leave its key out (masks not asked for): it is then absent, not undefined.
    if (field.spec !== undefined && field.spec in parts && !(field.spec in spec)) {
      spec[field.spec] = parts[field.spec];
    }
  }
  for (const key of Object.keys(parts)) {
    if (!(key in spec)) throw new Error(`transform step output ${key} is no field's spec`);
  }
  return spec as TransformSpec;
}

/**
 * Runs every step's part of a plan in order, on a plan of the oriented source image. The
 * steps read only the spec fields they validated. @internal
 */
export function planSteps(
  plan: TransformPlan,
  spec: Pick<TransformSpec, 'resize' | 'crop' | 'flipProbability'>,
  random: SampleRandom,
): void {
  for (const s of TRANSFORM_STEPS) {
    (s.plan as ((p: TransformPlan, o: object, r: SampleRandom) => void) | undefined)?.(
      plan,
      spec,
      random,
    );
  }
}

/**
 * The fields of every step, as data (no functions): what `transform_steps.json` of the Python
 * client holds, so that its tests check its `Transform` against the same description.
 */
export function transformStepsJson(): string {
  const steps = TRANSFORM_STEPS.map((s) => ({
    name: s.name,
    summary: s.summary,
    fields: s.fields.map((f) => ({
      proto: f.proto,
      number: f.number,
      sdk: f.sdk,
      python: f.python,
      type: f.type,
    })),
  }));
  return `${JSON.stringify({ steps }, null, 2)}\n`;
}
