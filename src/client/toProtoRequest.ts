import type { MissingSamplePolicy__Output } from '../generated/scylla_loader/v1/MissingSamplePolicy.js';
import type { Ordering__Output } from '../generated/scylla_loader/v1/Ordering.js';
import type { ShardRule__Output } from '../generated/scylla_loader/v1/ShardRule.js';
import type { ShuffleMode__Output } from '../generated/scylla_loader/v1/ShuffleMode.js';
import type { StreamBatchesRequest } from '../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type {
  MissingSamplePolicyName,
  OrderingName,
  ShardRuleName,
  ShuffleModeName,
  StreamBatchesOptions,
} from './StreamBatchesOptions.js';

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
    dataset: options.dataset,
    split: options.split,
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
  };
}
