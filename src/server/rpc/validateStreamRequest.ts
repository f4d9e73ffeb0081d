import type { StreamBatchesRequest__Output } from '../../generated/scylla_loader/v1/StreamBatchesRequest.js';
import { decodeJobCheckpoint } from '../../proto/jobCheckpointCodec.js';
import {
  invalidArgument,
  type JobCheckpoint,
  type ShardRule,
  type StreamLimits,
  type StreamRequest,
  type TransformLimits,
  validateColumnNames,
  validateJobId,
  validateIdentifier,
  validateMix,
  MAX_SAMPLES_PER_EPOCH,
  samplesPerEpochOutOfRange,
  SOURCES_WITH_DATASET,
} from '../../core/index.js';
import { validateTransform } from './validateTransform.js';

const SHARD_RULES: Record<string, ShardRule> = {
  SHARD_RULE_UNSPECIFIED: 'uneven',
  SHARD_RULE_UNEVEN: 'uneven',
  SHARD_RULE_PAD: 'pad',
  SHARD_RULE_DROP: 'drop',
};

/**
 * Applies defaults (0 epochs means 1, world size 0 means 1, prefetch 0 means the server's
 * default, unspecified enums mean their documented default) and checks every field against the
 * server's limits, throwing INVALID_ARGUMENT with the field, the value and what is allowed.
 */
export function validateStreamRequest(
  req: StreamBatchesRequest__Output,
  config: Pick<
    StreamLimits,
    'maxBatchSize' | 'defaultPrefetch' | 'maxPrefetch' | 'maxWindowSamples'
  > &
    Pick<TransformLimits, 'maxTransformSide'> & { maxMessageBytes: number },
): StreamRequest {
  const mix = streamMix(req);
  const dataset = mix ? '' : validateIdentifier(req.dataset, 'dataset');
  const split = mix ? '' : req.split.trim();
  if (!mix && split === '') {
    throw invalidArgument('split is required (e.g. "all" for every sample)');
  }
  const batchSize = req.batchSize;
  if (batchSize < 1 || batchSize > config.maxBatchSize) {
    throw invalidArgument(
      `batch_size ${batchSize} is out of range: use 1 to ${config.maxBatchSize} ` +
        '(the server limit, SCYLLA_LOADER_MAX_BATCH_SIZE)',
    );
  }
  const worldSize = req.worldSize === 0 ? 1 : req.worldSize;
  if (req.rank >= worldSize) {
    throw invalidArgument(`rank ${req.rank} must be below world_size ${worldSize}`);
  }
  const epochs = req.epochs === 0 ? 1 : req.epochs;
  if (req.firstEpoch + epochs > 2 ** 32 - 1) {
    throw invalidArgument('first_epoch + epochs must stay below 2^32');
  }
  const prefetch = req.prefetch === 0 ? config.defaultPrefetch : req.prefetch;
  if (prefetch > config.maxPrefetch) {
    throw invalidArgument(`prefetch ${prefetch} is over the server limit of ${config.maxPrefetch}`);
  }
  if (prefetch * batchSize > config.maxWindowSamples) {
    throw invalidArgument(
      `prefetch x batch_size = ${prefetch * batchSize} samples is over the limit of ` +
        `${config.maxWindowSamples} per stream (SCYLLA_LOADER_MAX_WINDOW_SAMPLES); lower prefetch`,
    );
  }
  const shardRule = SHARD_RULES[req.shardRule];
  if (!shardRule) throw invalidArgument(`unknown shard_rule ${req.shardRule}`);
  const shuffle = enumValue(req.shuffle, 'shuffle', {
    SHUFFLE_MODE_UNSPECIFIED: 'uniform',
    SHUFFLE_MODE_UNIFORM: 'uniform',
    SHUFFLE_MODE_NONE: 'none',
  } as const);
  const ordering = enumValue(req.ordering, 'ordering', {
    ORDERING_UNSPECIFIED: 'out-of-order',
    ORDERING_OUT_OF_ORDER: 'out-of-order',
    ORDERING_IN_ORDER: 'in-order',
  } as const);
  const missing = enumValue(req.missingSamplePolicy, 'missing_sample_policy', {
    MISSING_SAMPLE_POLICY_UNSPECIFIED: 'fail',
    MISSING_SAMPLE_POLICY_FAIL: 'fail',
    MISSING_SAMPLE_POLICY_SKIP: 'skip',
  } as const);
  return {
    dataset,
    split,
    ...(mix ? { mix } : {}),
    batchSize,
    seed: BigInt(req.seed || '0'),
    firstEpoch: req.firstEpoch,
    epochs,
    rank: req.rank,
    worldSize,
    shardRule,
    shuffle,
    dropLast: req.dropLast,
    ordering,
    prefetch,
    adaptivePrefetch: req.prefetch === 0,
    missing,
    resumeToken: req.resumeToken,
    ...(req.jobCheckpoint.length > 0
      ? { jobCheckpoint: parseJobCheckpoint(req.jobCheckpoint) }
      : {}),
    ...(req.transform ? { transform: validateTransform(req.transform, batchSize, config) } : {}),
    columns: validateColumnNames(req.columns),
    ...ledgerFields(req),
  };
}

/**
 * The request's mixture (validated: see `validateMix`), or undefined for a single-source
 * request; dataset and split beside sources, or samples_per_epoch without them, are
 * INVALID_ARGUMENT.
 */
function streamMix(req: StreamBatchesRequest__Output): StreamRequest['mix'] {
  const raw = req.samplesPerEpoch || '0';
  // A uint64 past 2^53 would print rounded: say it as sent.
  const samplesPerEpoch = BigInt(raw) > BigInt(MAX_SAMPLES_PER_EPOCH) ? Number.NaN : Number(raw);
  if (Number.isNaN(samplesPerEpoch)) throw samplesPerEpochOutOfRange(raw);
  if (req.sources.length === 0) {
    if (samplesPerEpoch !== 0) {
      throw invalidArgument('samples_per_epoch applies to a mixture: give sources, or leave it 0');
    }
    return undefined;
  }
  if (req.dataset !== '' || req.split.trim() !== '') {
    throw invalidArgument(SOURCES_WITH_DATASET);
  }
  return validateMix({
    sources: req.sources.map((s) => ({ ...s, weight: s.weight })),
    samplesPerEpoch,
  });
}

/** Maps an enum's name to its meaning; an unknown value (a newer client?) is INVALID_ARGUMENT. */
function enumValue<T>(value: string, field: string, table: Record<string, T>): T {
  const v = table[value];
  if (v === undefined) {
    throw invalidArgument(`unknown ${field} ${value}; use one of ${Object.keys(table).join(', ')}`);
  }
  return v;
}

/** The request's job checkpoint, or INVALID_ARGUMENT when its bytes are not one. */
function parseJobCheckpoint(bytes: Buffer): JobCheckpoint {
  try {
    return decodeJobCheckpoint(bytes);
  } catch (err) {
    throw invalidArgument(
      `${(err as Error).message}; pass the bytes mergeResumeTokens or merge_states made, unchanged`,
    );
  }
}

/** The request's job id, skip and replay, each checked against the fields it needs. */
function ledgerFields(
  req: StreamBatchesRequest__Output,
): Pick<StreamRequest, 'jobId' | 'skipBatches' | 'replay'> {
  const jobId = req.jobId === '' ? undefined : validateJobId(req.jobId);
  const { skipBatches: skip, replay } = req;
  if ((skip || replay) && jobId === undefined) {
    throw invalidArgument(
      `${skip ? 'skip_batches' : 'replay'} needs job_id: the job whose ledger holds the batches`,
    );
  }
  if (skip && replay) throw invalidArgument('a stream is a replay or skips batches, not both');
  if (skip) {
    if (req.resumeToken.length === 0) {
      throw invalidArgument(
        'skip_batches needs a resume_token: the batches are skipped after the point it marks',
      );
    }
    if (req.jobCheckpoint.length > 0) {
      throw invalidArgument(
        'skip_batches works with a resume_token of one rank; a job_checkpoint cannot name ' +
          'batches to skip',
      );
    }
    if (skip.lastBatch < skip.firstBatch) {
      throw invalidArgument(
        `skip_batches ends (batch ${skip.lastBatch}) before it starts (batch ${skip.firstBatch})`,
      );
    }
  }
  if (replay && req.jobCheckpoint.length > 0) {
    throw invalidArgument('a replay reads the ledger: leave job_checkpoint empty');
  }
  return {
    ...(jobId === undefined ? {} : { jobId }),
    ...(skip ? { skipBatches: { first: skip.firstBatch, last: skip.lastBatch } } : {}),
    ...(replay
      ? {
          replay: {
            epoch: replay.epoch,
            rank: replay.rank,
            worldSize: replay.worldSize,
            first: replay.firstBatch,
            last: Math.max(replay.firstBatch, replay.lastBatch),
          },
        }
      : {}),
  };
}
