import { invalidArgument } from '../errors/LoaderError.js';
import type { ResolvedCheckpoint } from '../resume/jobCheckpoint.js';

/**
 * A job checkpoint's epoch lies within the request's epochs, or at their end (the job is
 * done: the stream sends nothing). Anything else is INVALID_ARGUMENT naming both.
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
