import { invalidArgument } from '../errors/LoaderError.js';
import { type ResumeKeyring, type ResumeState, readResumeToken } from '../resume/resumeToken.js';
import type { StreamPlan } from '../stream/StreamPlan.js';
import type { StreamRequest } from '../stream/StreamRequest.js';
import type { Ledger, LedgerStream, TimelinePoint } from './Ledger.js';
import { ledgerFingerprint } from './ledgerFingerprint.js';

/**
 * Opens a planned stream's job in the ledger (see `Ledger.openJob`), marks superseded what the
 * stream's start makes stale, and returns what its batches are recorded into. The stream
 * starts at its resume point (or its first epoch's first batch): the trainer it feeds never
 * received what its rank recorded from there on. With a job checkpoint, the same goes for
 * every rank of the checkpoint's world from its token on.
 *
 * With `skipBatches` right after the token, those batches' rows are marked skipped instead,
 * and the stream starts from the token's state with their samples counted as delivered (the
 * returned `resume`), at the batch after the last one skipped. A token already past the
 * skipped range (a skipping stream that reconnects) has them counted already: no-op.
 */
export async function openLedgerStream(
  ledger: Ledger,
  request: StreamRequest & { jobId: string },
  plan: StreamPlan,
  resumeKey: ResumeKeyring,
): Promise<{ stream: LedgerStream; resume?: ResumeState }> {
  const job = await ledger.openJob(request.jobId, {
    fingerprint: ledgerFingerprint(request, plan.contentHash),
    sources: plan.sources.map((s) => ({ dataset: s.dataset, split: s.split })),
  });
  const points = startPoints(request, plan, resumeKey);
  const skip = request.skipBatches;
  const from = plan.resume;
  if (skip === undefined || from === undefined || from.nextBatchIndex > skip.last) {
    await ledger.supersede(request.jobId, points, job.epochs);
    return { stream: ledger.startStream(job, request.rank, request.worldSize, plan.segmentOf) };
  }
  if (from.nextBatchIndex !== skip.first) {
    throw invalidArgument(
      `skip_batches starts at batch ${skip.first}, but the resume token continues at batch ` +
        `${from.nextBatchIndex} of epoch ${from.epoch}: skip from batch ${from.nextBatchIndex}`,
    );
  }
  const own = { ...points[0]!, segment: plan.segmentOf(from.epoch) };
  const skipped = await ledger.skippable(request.jobId, own, skip.last);
  await ledger.supersede(request.jobId, points, job.epochs, skipped);
  await ledger.markSkipped(request.jobId, skipped);
  return {
    stream: ledger.startStream(job, request.rank, request.worldSize, plan.segmentOf),
    resume: withSkipped(
      from,
      skipped.flatMap((r) => r.positions),
      skip.last + 1,
    ),
  };
}

/**
 * `state` with `positions` delivered too, continuing at batch `nextBatchIndex`. A position the
 * state has delivered already means the ledger and the token disagree: INVALID_ARGUMENT.
 */
export function withSkipped(
  state: ResumeState,
  positions: readonly number[],
  nextBatchIndex: number,
): ResumeState {
  const delivered = new Set(state.deliveredAbove);
  for (const p of positions) {
    if (p < state.low || delivered.has(p)) {
      throw invalidArgument(
        `a skipped batch holds position ${p} of epoch ${state.epoch}, which the resume token ` +
          'says was delivered before it: the token and the ledger are of different runs',
      );
    }
    delivered.add(p);
  }
  let low = state.low;
  while (delivered.delete(low)) low++;
  return {
    epoch: state.epoch,
    low,
    deliveredAbove: [...delivered].sort((a, b) => a - b),
    nextBatchIndex,
  };
}

/** Where the stream, and a job checkpoint's ranks, continue their timelines. */
export function startPoints(
  request: StreamRequest,
  plan: StreamPlan,
  resumeKey: ResumeKeyring,
): TimelinePoint[] {
  const epoch = plan.resume?.epoch ?? plan.checkpoint?.epoch ?? request.firstEpoch;
  const points: TimelinePoint[] = [
    {
      epoch,
      rank: request.rank,
      worldSize: request.worldSize,
      segment: plan.segmentOf(epoch),
      batchIndex: plan.resume?.nextBatchIndex ?? 0,
    },
  ];
  const checkpoint = request.jobCheckpoint;
  // The checkpoint's world is superseded once, by the streams that start from it: a stream
  // that reconnects with a token of its own (and the checkpoint, as it must) leaves it be.
  if (checkpoint === undefined || request.resumeToken.length > 0) return points;
  // The plan checked every token of the checkpoint: reading them again cannot fail.
  const tokens = checkpoint.ranks.map((entry) =>
    entry.resumeToken.length === 0 ? undefined : readResumeToken(resumeKey, entry.resumeToken),
  );
  // A rank without a token was in the segment of the ranks with one (they share one base).
  const oldSegment = tokens.find((t) => t !== undefined)?.base;
  const spared = plan.segmentOf(epoch);
  // Later epochs of the old world are the new world's to supersede when it has the same size.
  const laterEpochs = checkpoint.worldSize !== request.worldSize;
  checkpoint.ranks.forEach((entry, i) => {
    const token = tokens[i];
    points.push({
      epoch: token?.state.epoch ?? entry.epoch,
      rank: entry.rank,
      worldSize: checkpoint.worldSize,
      ...(token ? { segment: token.base } : oldSegment ? { segment: oldSegment } : {}),
      batchIndex: token?.state.nextBatchIndex ?? 0,
      laterEpochs,
      sparedSegment: spared,
    });
  });
  return points;
}
