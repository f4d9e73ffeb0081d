import { LoaderError, invalidArgument, notFound } from '../errors/LoaderError.js';
import type { EpochShard } from '../sampling/epochShard.js';
import type { StreamPlan } from '../stream/StreamPlan.js';
import type { StreamRequest } from '../stream/StreamRequest.js';
import type { Ledger, LedgerBatchRow } from './Ledger.js';
import { ledgerFingerprint } from './ledgerFingerprint.js';

/** A replay request: the job and the recorded range. */
type ReplayRequest = StreamRequest & {
  jobId: string;
  replay: NonNullable<StreamRequest['replay']>;
};

/**
 * What a replay is planned as: the request's epoch of the whole split (or mixture) at rank 0
 * of 1, in order, with nothing recorded; {@link replayShard} then narrows the epoch to the
 * recorded samples.
 */
export function replayPlanRequest(request: ReplayRequest): StreamRequest {
  const { replay } = request;
  const rest: StreamRequest = { ...request };
  delete rest.jobId;
  delete rest.skipBatches;
  delete rest.replay;
  return {
    ...rest,
    firstEpoch: replay.epoch,
    epochs: 1,
    rank: 0,
    worldSize: 1,
    shardRule: 'uneven',
    dropLast: false,
    ordering: 'in-order',
    resumeToken: Buffer.alloc(0),
  };
}

/**
 * The recorded batches a replay streams again: the job's live (or skipped) rows of the range,
 * of one world size and segment, every index present, each but the last a full batch (so that
 * in-order assembly cuts the same batches). A reconnecting replay's token names the last batch
 * it received: the rows after it. The request must name the job's fields (its fingerprint),
 * or the same ids would not give the same batches: FAILED_PRECONDITION.
 */
export async function replayRows(
  ledger: Ledger,
  request: ReplayRequest,
  plan: StreamPlan,
): Promise<LedgerBatchRow[]> {
  const { jobId, replay } = request;
  const job = await ledger.readJob(jobId);
  if (job === undefined) throw notFound(`job ${jobId} has no training ledger to replay`);
  if (!job.fingerprint.equals(ledgerFingerprint(request, plan.contentHash))) {
    throw new LoaderError(
      'FAILED_PRECONDITION',
      `the replay's fields differ from job ${jobId}'s: repeat its dataset or sources, split, ` +
        'batch size, seed, shard rule, shuffle, drop_last and transform',
    );
  }
  const where = `epoch ${replay.epoch}, rank ${replay.rank}`;
  let rows = await ledger.batches(
    jobId,
    { epoch: replay.epoch, rank: replay.rank, first: replay.first, last: replay.last },
    false,
  );
  if (replay.worldSize !== 0) rows = rows.filter((r) => r.worldSize === replay.worldSize);
  const worlds = [...new Set(rows.map((r) => r.worldSize))];
  if (worlds.length > 1) {
    throw invalidArgument(
      `${where} of job ${jobId} has batches of world sizes ${worlds.join(' and ')}: name the ` +
        "replay's world_size",
    );
  }
  if (new Set(rows.map((r) => r.segment.toString('hex'))).size > 1) {
    throw invalidArgument(
      `${where} of job ${jobId} was re-sharded within the range: replay each part apart`,
    );
  }
  for (let index = replay.first; index <= replay.last; index++) {
    if (!rows.some((r) => r.index === index)) {
      throw invalidArgument(`batch ${index} of ${where} is not in the ledger of job ${jobId}`);
    }
  }
  rows.slice(0, -1).forEach((r) => {
    if (r.ids.length / 16 !== request.batchSize) {
      throw invalidArgument(
        `batch ${r.index} of ${where} held ${r.ids.length / 16} samples, not ${request.batchSize}: ` +
          'replay a range that ends there',
      );
    }
  });
  if (request.resumeToken.length === 0) return rows;
  const at = rows.findIndex((r) => r.resumeToken.equals(request.resumeToken));
  if (at < 0) {
    throw invalidArgument(
      'the resume_token is not one of the replayed batches: a replay continues from a token it sent',
    );
  }
  return rows.slice(at + 1);
}

/**
 * The epoch of `whole` (rank 0 of 1: its j-th sample is the epoch's j-th) narrowed to the
 * recorded samples, in their recorded order: each keeps its position in the epoch's order, so
 * a transform (seeded by epoch, id, and in a mixture by that position) gives the same pixels.
 */
export function replayShard(whole: EpochShard, rows: readonly LedgerBatchRow[]): EpochShard {
  const positions = Uint32Array.from(rows.flatMap((r) => r.epochPositions));
  return {
    length: positions.length,
    storedPosition: (j) => whole.storedPosition(positions[j]!),
    epochPosition: (j) => positions[j]!,
  };
}
