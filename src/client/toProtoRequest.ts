import type { MissingSamplePolicy__Output } from '../generated/scylla_loader/v1/MissingSamplePolicy.js';
import type { Ordering__Output } from '../generated/scylla_loader/v1/Ordering.js';
import type { ShardRule__Output } from '../generated/scylla_loader/v1/ShardRule.js';
import type { ShuffleMode__Output } from '../generated/scylla_loader/v1/ShuffleMode.js';
import type { StreamBatchesRequest } from '../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type { Transform } from '../generated/scylla_loader/v1/Transform.js';
import {
  LoaderError,
  SOURCES_WITH_DATASET,
  transformFields,
  validateColumnNames,
  validateJobId,
  validateMix,
} from '../core/requests.js';
import type {
  MissingSamplePolicyName,
  OrderingName,
  ShardRuleName,
  ShuffleModeName,
  StreamBatchesOptions,
} from './StreamBatchesOptions.js';
import type { TransformOptions } from './TransformOptions.js';

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
    ...(options.columns?.length ? { columns: columnsOf(options.columns) } : {}),
    ...(options.jobId !== undefined ? { jobId: jobIdOf(options.jobId) } : {}),
    ...(options.skipBatches
      ? {
          skipBatches: {
            firstBatch: uint32('skipBatches.first', options.skipBatches.first),
            lastBatch: uint32('skipBatches.last', options.skipBatches.last),
          },
        }
      : {}),
    ...(options.replay
      ? {
          replay: {
            epoch: uint32('replay.epoch', options.replay.epoch),
            rank: uint32('replay.rank', options.replay.rank),
            firstBatch: uint32('replay.first', options.replay.first),
            lastBatch: uint32('replay.last', options.replay.last ?? options.replay.first),
            worldSize: uint32('replay.worldSize', options.replay.worldSize),
          },
        }
      : {}),
  };
}

/** The request's job id, checked with the server's rule (a RangeError). */
function jobIdOf(jobId: string): string {
  try {
    return validateJobId(jobId, 'jobId');
  } catch (err) {
    if (err instanceof LoaderError) throw new RangeError(err.message, { cause: err });
    throw err;
  }
}

/** The request's columns, checked with the server's rules and words (a RangeError). */
function columnsOf(columns: readonly string[]): string[] {
  try {
    return validateColumnNames(columns);
  } catch (err) {
    if (err instanceof LoaderError) throw new RangeError(err.message, { cause: err });
    throw err;
  }
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
 * The SDK's transform as the proto's, field by field from the transform's description
 * (`TRANSFORM_STEPS`): enum names to values, ranges to their two fields. Only what protobuf
 * would wrap is refused here (a RangeError), and two fields of one oneof; the server checks
 * the rest and answers INVALID_ARGUMENT naming the field. @internal
 */
export function toProtoTransform(t: TransformOptions): Transform {
  const given = t as unknown as Readonly<Record<string, unknown>>;
  const fields = transformFields();
  const oneofs = new Map<string, string[]>();
  for (const f of fields) {
    if (f.type.kind !== 'message' || f.type.oneof === undefined) continue;
    const names = oneofs.get(f.type.oneof) ?? [];
    names.push(f.sdk);
    oneofs.set(f.type.oneof, names);
  }
  for (const names of oneofs.values()) {
    if (names.filter((n) => given[n] !== undefined).length > 1) {
      throw new RangeError(`transform takes ${names.join(' or ')}, not both`);
    }
  }
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const value = given[f.sdk];
    const where = `transform.${f.sdk}`;
    const key = camelCase(f.proto);
    switch (f.type.kind) {
      case 'uint32':
        out[key] = uint32(where, value as number | undefined);
        break;
      case 'double':
        out[key] = (value as number | undefined) ?? 0;
        break;
      case 'bool':
        if (value !== undefined && typeof value !== 'boolean') {
          throw new RangeError(`${where} must be true or false, got ${String(value)}`);
        }
        out[key] = value === true;
        break;
      case 'enum': {
        const { prefix, values } = f.type;
        const table = Object.fromEntries(values.map((v) => [v, `${prefix}${v.toUpperCase()}`]));
        out[key] = enumValue(table, where, value as string | undefined, `${prefix}UNSPECIFIED`);
        break;
      }
      case 'message': {
        if (value === undefined) break;
        const fieldsOf = value as Readonly<Record<string, unknown>>;
        const message: Record<string, unknown> = {};
        for (const sub of f.type.fields) {
          const v = fieldsOf[sub.sdk];
          if (sub.type === 'uint32') {
            message[camelCase(sub.proto[0]!)] = uint32(`${where}.${sub.sdk}`, v as number);
          } else {
            const range = v as readonly [number, number] | undefined;
            message[camelCase(sub.proto[0]!)] = range?.[0] ?? 0;
            message[camelCase(sub.proto[1]!)] = range?.[1] ?? 0;
          }
        }
        out[key] = message;
        break;
      }
    }
  }
  return out as Transform;
}

/** A proto field's name as the generated types spell it: `scale_min` -> `scaleMin`. */
function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
