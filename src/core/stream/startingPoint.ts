import { invalidArgument } from '../errors/LoaderError.js';
import type { ResolvedCheckpoint } from '../resume/jobCheckpoint.js';
import {
  NO_BASE,
  type ResumeKeyring,
  type ResumeState,
  type TokenBinding,
  decodeResumeToken,
} from '../resume/resumeToken.js';

/**
 * Where a stream starts: the resume token's state when there is one (a reconnect, maybe
 * within an epoch re-sharded from `elastic`, whose digest the token must carry), else the
 * start of what the job checkpoint left, else nothing (first_epoch). A token of another job,
 * rank or world, or one that does not match the checkpoint, is INVALID_ARGUMENT.
 */
export function startingPoint(
  key: ResumeKeyring,
  binding: TokenBinding,
  resumeToken: Buffer,
  elastic: ResolvedCheckpoint | undefined,
): ResumeState | undefined {
  if (resumeToken.length === 0) {
    return elastic
      ? { epoch: elastic.epoch, low: 0, deliveredAbove: [], nextBatchIndex: 0 }
      : undefined;
  }
  const read = decodeResumeToken(key, binding, resumeToken);
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
