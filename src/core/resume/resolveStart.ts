import type { SettingNames } from '../config/settingNames.js';
import { invalidArgument } from '../errors/LoaderError.js';
import type { LayerRules } from '../sampling/epochRemainder.js';
import {
  type JobCheckpoint,
  type ResolvedCheckpoint,
  resolveJobCheckpoint,
} from './jobCheckpoint.js';
import {
  type JobFields,
  NO_BASE,
  type ResumeKeyring,
  type ResumeState,
  type TokenBinding,
  type TokenOwner,
  decodeResumeToken,
  encodeResumeToken,
  jobFingerprint,
  requestFingerprint,
} from './resumeToken.js';

/** What of a stream's request decides where it starts and what its tokens are bound to. */
export interface StartRequest
  extends Omit<JobFields, 'splitContentHash' | 'shardRule'>, TokenOwner, LayerRules {
  /** Empty: none. */
  resumeToken: Buffer;
  jobCheckpoint?: JobCheckpoint | undefined;
}

/** What the stream reads, as its tokens and checkpoints are bound to it. */
export interface StartSplit {
  /** Positions of every epoch (a split's samples, or a mixed epoch's positions). */
  positions: number;
  /** The split's (or the mixture's) content hash. */
  contentHash: string;
}

/** Where a stream starts, and how it signs where it leaves off. */
export interface StreamStart {
  /** `jobFingerprint` of the request and split: what the stream's tokens are bound to. */
  job: Buffer;
  /** The request's job checkpoint, validated (absent: none). */
  checkpoint?: ResolvedCheckpoint;
  /** Where the stream starts (absent: the start of first_epoch). */
  resume?: ResumeState;
  /**
   * Whether `epoch` is the checkpoint's epoch re-sharded from what its world left (its shard
   * is taken from the remainder, and its tokens carry the checkpoint's digest).
   */
  resharded(epoch: number): boolean;
  /** The resume token of a batch that leaves the stream at `state`. */
  resumeToken(state: ResumeState): Buffer;
}

/**
 * Every rule about where a stream starts, in one place: fingerprints the job, validates the
 * job checkpoint against it and the split's size (see `resolveJobCheckpoint`), checks that the
 * checkpoint's epoch lies within the request's epochs ({@link checkCheckpointEpoch}), and reads
 * the resume token against the job, rank, world and checkpoint ({@link startingPoint}). Every
 * refusal is INVALID_ARGUMENT; `names` names the resume key's setting in them.
 */
export function resolveStart(
  key: ResumeKeyring,
  req: StartRequest,
  split: StartSplit,
  names?: SettingNames,
): StreamStart {
  const fields = { ...req, splitContentHash: split.contentHash };
  const job = jobFingerprint(fields);
  const legacyFor = (owner: TokenOwner): Buffer => requestFingerprint({ ...fields, ...owner });
  const checkpoint = req.jobCheckpoint
    ? resolveJobCheckpoint(req.jobCheckpoint, {
        key,
        job,
        legacyFor,
        n: split.positions,
        rules: req,
        ...(names ? { settingNames: names } : {}),
      })
    : undefined;
  if (checkpoint) checkCheckpointEpoch(checkpoint, req.firstEpoch, req.epochs);
  const resume = startingPoint(
    key,
    { job, legacy: legacyFor(req), rank: req.rank, worldSize: req.worldSize },
    req.resumeToken,
    checkpoint,
    names,
  );
  const resharded = (epoch: number): boolean =>
    checkpoint !== undefined && checkpoint.layers.length > 0 && epoch === checkpoint.epoch;
  return {
    job,
    ...(checkpoint ? { checkpoint } : {}),
    ...(resume ? { resume } : {}),
    resharded,
    resumeToken: (state) =>
      encodeResumeToken(
        key,
        {
          job,
          rank: req.rank,
          worldSize: req.worldSize,
          base: resharded(state.epoch) ? checkpoint!.digest : NO_BASE,
        },
        state,
      ),
  };
}

/**
 * Where a stream starts: the resume token's state when there is one (a reconnect, maybe
 * within an epoch re-sharded from `elastic`, whose digest the token must carry), else the
 * start of what the job checkpoint left, else nothing (first_epoch). A token of another job,
 * rank or world, or one that does not match the checkpoint, is INVALID_ARGUMENT.
 *
 * @internal exported for its unit tests; streams go through {@link resolveStart}.
 */
export function startingPoint(
  key: ResumeKeyring,
  binding: TokenBinding,
  resumeToken: Buffer,
  elastic: ResolvedCheckpoint | undefined,
  names?: SettingNames,
): ResumeState | undefined {
  if (resumeToken.length === 0) {
    return elastic
      ? { epoch: elastic.epoch, low: 0, deliveredAbove: [], nextBatchIndex: 0 }
      : undefined;
  }
  const read = decodeResumeToken(key, binding, resumeToken, names);
  const epoch = read.state.epoch;
  if (elastic && epoch < elastic.epoch) {
    throw invalidArgument(
      `resume token is in epoch ${epoch}, before the job checkpoint's epoch ${elastic.epoch}: ` +
        'pass the token of a stream started from this job_checkpoint, or no token',
    );
  }
  const want =
    elastic && epoch === elastic.epoch && elastic.layers.length > 0 ? elastic.digest : NO_BASE;
  if (!read.base.equals(want)) {
    throw invalidArgument(
      read.base.equals(NO_BASE)
        ? 'resume token is of an ordinary epoch but the request carries a job checkpoint for it; ' +
            'drop job_checkpoint, or pass the token of a stream started from it'
        : 'resume token continues an epoch re-sharded from a job checkpoint: repeat the ' +
            'job_checkpoint that stream was started with, unchanged, along with the token',
    );
  }
  return read.state;
}

/**
 * A job checkpoint's epoch lies within the request's epochs, or at their end (the job is
 * done: the stream sends nothing). Anything else is INVALID_ARGUMENT naming both.
 *
 * @internal exported for its unit tests; streams go through {@link resolveStart}.
 */
export function checkCheckpointEpoch(
  elastic: Pick<ResolvedCheckpoint, 'epoch'>,
  firstEpoch: number,
  epochs: number,
): void {
  if (elastic.epoch < firstEpoch || elastic.epoch > firstEpoch + epochs) {
    throw invalidArgument(
      `job checkpoint is in epoch ${elastic.epoch}, outside the request's epochs ` +
        `${firstEpoch} to ${firstEpoch + epochs - 1}`,
    );
  }
}
