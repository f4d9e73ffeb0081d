import type { BadImagePolicy__Output } from '../generated/scylla_loader/v1/BadImagePolicy.js';
import type { Interpolation__Output } from '../generated/scylla_loader/v1/Interpolation.js';
import type { TransformOutput__Output } from '../generated/scylla_loader/v1/TransformOutput.js';
import type { MissingSamplePolicy__Output } from '../generated/scylla_loader/v1/MissingSamplePolicy.js';
import type { Ordering__Output } from '../generated/scylla_loader/v1/Ordering.js';
import type { ShardRule__Output } from '../generated/scylla_loader/v1/ShardRule.js';
import type { ShuffleMode__Output } from '../generated/scylla_loader/v1/ShuffleMode.js';
import type { StreamBatchesRequest } from '../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type { Transform } from '../generated/scylla_loader/v1/Transform.js';
import { LoaderError, SOURCES_WITH_DATASET, validateMix } from '../core/requests.js';
import type {
  MissingSamplePolicyName,
  OrderingName,
  ShardRuleName,
  ShuffleModeName,
  StreamBatchesOptions,
} from './StreamBatchesOptions.js';
import type {
  BadImagePolicyName,
  InterpolationName,
  TransformOptions,
  TransformOutputName,
} from './TransformOptions.js';

const SHARD_RULES: Record<ShardRuleName, ShardRule__Output> = {
  uneven: 'SHARD_RULE_UNEVEN',
  pad: 'SHARD_RULE_PAD',
  drop: 'SHARD_RULE_DROP',
};
const SHUFFLE_MODES: Record<ShuffleModeName, ShuffleMode__Output> = {
  uniform: 'SHUFFLE_MODE_UNIFORM',
  none: 'SHUFFLE_MODE_NONE',
};
const ORDERINGS: Record<OrderingName, Ordering__Output> = {
  'out-of-order': 'ORDERING_OUT_OF_ORDER',
  'in-order': 'ORDERING_IN_ORDER',
};
const MISSING_SAMPLE_POLICIES: Record<MissingSamplePolicyName, MissingSamplePolicy__Output> = {
  fail: 'MISSING_SAMPLE_POLICY_FAIL',
  skip: 'MISSING_SAMPLE_POLICY_SKIP',
};

const INTERPOLATIONS: Record<InterpolationName, Interpolation__Output> = {
  bilinear: 'INTERPOLATION_BILINEAR',
  bicubic: 'INTERPOLATION_BICUBIC',
  lanczos3: 'INTERPOLATION_LANCZOS3',
  nearest: 'INTERPOLATION_NEAREST',
};
const TRANSFORM_OUTPUTS: Record<TransformOutputName, TransformOutput__Output> = {
  raw: 'TRANSFORM_OUTPUT_RAW',
  jpeg: 'TRANSFORM_OUTPUT_JPEG',
  webp: 'TRANSFORM_OUTPUT_WEBP',
};
const BAD_IMAGE_POLICIES: Record<BadImagePolicyName, BadImagePolicy__Output> = {
  fail: 'BAD_IMAGE_POLICY_FAIL',
  skip: 'BAD_IMAGE_POLICY_SKIP',
};

const UINT64_MAX = 2n ** 64n - 1n;
const UINT32_MAX = 2 ** 32 - 1;

function enumValue<N extends string, V>(
  table: Record<N, V>,
  field: string,
  name: N | undefined,
  unspecified: V,
): V {
  if (name === undefined) {
    return unspecified;
  }
  if (!Object.hasOwn(table, name)) {
    const allowed = Object.keys(table).join(', ');
    throw new RangeError(`${field} must be one of ${allowed}, got ${String(name)}`);
  }
  return table[name];
}

/** A uint32 field, 0 when absent; a RangeError for anything protobuf would wrap. @internal */
export function uint32(field: string, value: number | undefined): number {
  if (value === undefined) {
    return 0;
  }
  if (!Number.isInteger(value) || value < 0 || value > UINT32_MAX) {
    throw new RangeError(`${field} must be an integer in [0, ${UINT32_MAX}], got ${value}`);
  }
  return value;
}

/**
 * The seed as a decimal string: uint64 goes over the wire as a string (`longs: String`).
 *
 * @internal
 */
export function seedString(seed: bigint | number | string | undefined): string {
  if (seed === undefined) {
    return '0';
  }
  let value: bigint;
  if (typeof seed === 'number') {
    if (!Number.isSafeInteger(seed)) {
      throw new RangeError(`seed must be a safe integer (use a bigint or a string), got ${seed}`);
    }
    value = BigInt(seed);
  } else if (typeof seed === 'string') {
    if (!/^\d+$/.test(seed)) {
      throw new RangeError(`seed must be a decimal integer, got '${seed}'`);
    }
    value = BigInt(seed);
  } else {
    value = seed;
  }
  if (value < 0n || value > UINT64_MAX) {
    throw new RangeError(`seed must be in [0, 2^64 - 1], got ${value}`);
  }
  return value.toString();
}

/**
 * Converts the SDK's request to the proto's `StreamBatchesRequest`: enum names to proto
 * values (absent ones to `_UNSPECIFIED`, i.e. the server's default), the seed to a decimal
 * string, and the resume token to a Buffer over the same memory. Throws a RangeError for a
 * value the proto cannot carry (a negative or fractional count, a seed outside uint64), which
 * protobuf would otherwise wrap around silently.
 *
 * @internal
 */
export function toProtoRequest(options: StreamBatchesOptions): StreamBatchesRequest {
  const token = options.resumeToken;
  return {
    ...sourcesOf(options),
    batchSize: uint32('batchSize', options.batchSize),
    seed: seedString(options.seed),
    firstEpoch: uint32('firstEpoch', options.firstEpoch),
    epochs: uint32('epochs', options.epochs),
    rank: uint32('rank', options.rank),
    worldSize: uint32('worldSize', options.worldSize),
    shardRule: enumValue(SHARD_RULES, 'shardRule', options.shardRule, 'SHARD_RULE_UNSPECIFIED'),
    shuffle: enumValue(SHUFFLE_MODES, 'shuffle', options.shuffle, 'SHUFFLE_MODE_UNSPECIFIED'),
    dropLast: options.dropLast ?? false,
    ordering: enumValue(ORDERINGS, 'ordering', options.ordering, 'ORDERING_UNSPECIFIED'),
    prefetch: uint32('prefetch', options.prefetch),
    missingSamplePolicy: enumValue(
      MISSING_SAMPLE_POLICIES,
      'missingSamplePolicy',
      options.missingSamplePolicy,
      'MISSING_SAMPLE_POLICY_UNSPECIFIED',
    ),
    resumeToken: token
      ? Buffer.from(token.buffer, token.byteOffset, token.byteLength)
      : Buffer.alloc(0),
    jobCheckpoint: options.jobCheckpoint ? Buffer.from(options.jobCheckpoint) : Buffer.alloc(0),
    ...(options.transform ? { transform: toProtoTransform(options.transform) } : {}),
  };
}

/**
 * The request's one source, or its mixture checked with the core's validator (the server's
 * words: a RangeError naming the source by index); both forms, or neither, is a RangeError.
 */
function sourcesOf(
  options: StreamBatchesOptions,
): Pick<StreamBatchesRequest, 'dataset' | 'split' | 'sources' | 'samplesPerEpoch'> {
  if (!options.sources) {
    if (options.samplesPerEpoch !== undefined) {
      throw new RangeError('samplesPerEpoch applies to a mixture: give sources, or leave it out');
    }
    if (options.dataset === undefined || options.split === undefined) {
      throw new RangeError('a request names dataset and split, or sources to mix');
    }
    return { dataset: options.dataset, split: options.split };
  }
  if (options.dataset !== undefined || options.split !== undefined) {
    throw new RangeError(SOURCES_WITH_DATASET);
  }
  try {
    const mix = validateMix({
      sources: options.sources.map((s) => ({ ...s, weight: s.weight ?? 1 })),
      samplesPerEpoch: options.samplesPerEpoch ?? 0,
    });
    return {
      sources: mix.sources.map((s) => ({ ...s })),
      samplesPerEpoch: String(mix.samplesPerEpoch),
    };
  } catch (err) {
    if (err instanceof LoaderError) throw new RangeError(err.message, { cause: err });
    throw err;
  }
}

/**
 * The SDK's transform as the proto's: enum names to values, ranges to their two fields. Only
 * what protobuf would wrap is refused here (a RangeError); the server checks the rest and
 * answers INVALID_ARGUMENT naming the field. @internal
 */
export function toProtoTransform(t: TransformOptions): Transform {
  if (t.centerCrop && t.randomResizedCrop) {
    throw new RangeError('transform takes centerCrop or randomResizedCrop, not both');
  }
  const rrc = t.randomResizedCrop;
  return {
    channels: uint32('transform.channels', t.channels),
    resize: uint32('transform.resize', t.resize),
    ...(t.centerCrop
      ? {
          centerCrop: {
            height: uint32('transform.centerCrop.height', t.centerCrop.height),
            width: uint32('transform.centerCrop.width', t.centerCrop.width),
          },
        }
      : {}),
    ...(rrc
      ? {
          randomResizedCrop: {
            height: uint32('transform.randomResizedCrop.height', rrc.height),
            width: uint32('transform.randomResizedCrop.width', rrc.width),
            scaleMin: rrc.scale?.[0] ?? 0,
            scaleMax: rrc.scale?.[1] ?? 0,
            ratioMin: rrc.ratio?.[0] ?? 0,
            ratioMax: rrc.ratio?.[1] ?? 0,
          },
        }
      : {}),
    horizontalFlip: t.horizontalFlip ?? 0,
    interpolation: enumValue(
      INTERPOLATIONS,
      'transform.interpolation',
      t.interpolation,
      'INTERPOLATION_UNSPECIFIED',
    ),
    output: enumValue(
      TRANSFORM_OUTPUTS,
      'transform.output',
      t.output,
      'TRANSFORM_OUTPUT_UNSPECIFIED',
    ),
    quality: uint32('transform.quality', t.quality),
    badImagePolicy: enumValue(
      BAD_IMAGE_POLICIES,
      'transform.badImagePolicy',
      t.badImagePolicy,
      'BAD_IMAGE_POLICY_UNSPECIFIED',
    ),
  };
}
