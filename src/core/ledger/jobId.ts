import { invalidArgument } from '../errors/LoaderError.js';

/** Characters a job id may use, and its length. */
const JOB_ID = /^[A-Za-z0-9_.:/-]{1,128}$/;

/** The rule {@link validateJobId} checks, for messages and docs. */
export const JOB_ID_RULE = "1 to 128 characters of letters, digits, '_', '-', '.', ':' and '/'";

/**
 * A job id as a stream or a ledger query names it: returned as it is when it follows
 * {@link JOB_ID_RULE}, else INVALID_ARGUMENT naming the rule.
 */
export function validateJobId(jobId: string, field = 'job_id'): string {
  if (!JOB_ID.test(jobId)) {
    throw invalidArgument(
      `${field} ${JSON.stringify(jobId.slice(0, 140))} is not a job id: use ${JOB_ID_RULE}`,
    );
  }
  return jobId;
}
