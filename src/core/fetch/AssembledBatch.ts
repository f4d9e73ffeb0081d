import type { ResumeState } from '../resume/resumeToken.js';
import type { FetchedSample } from './FetchedSample.js';

/** A batch ready to be sent, with the state a resume token must carry after it. */
export interface AssembledBatch {
  epoch: number;
  index: number;
  samples: FetchedSample[];
  /** Positions of this batch's share left out: no row (missing), or undecodable. */
  skippedMissing: number;
  skippedUndecodable: number;
  lastInEpoch: boolean;
  /** Where a stream resumed right after this batch continues. */
  resume: ResumeState;
  /** When the oldest sample of the batch arrived (performance.now()). */
  firstArrivalAt: number;
}
