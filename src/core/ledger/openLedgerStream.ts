import { type ResumeKeyring, readResumeToken } from '../resume/resumeToken.js';
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
 */
export async function openLedgerStream(
  ledger: Ledger,
  request: StreamRequest & { jobId: string },
  plan: StreamPlan,
  resumeKey: ResumeKeyring,
): Promise<LedgerStream> {
  const job = await ledger.openJob(request.jobId, {
    fingerprint: ledgerFingerprint(request, plan.contentHash),
    sources: plan.sources.map((s) => ({ dataset: s.dataset, split: s.split })),
  });
  await ledger.supersede(request.jobId, startPoints(request, plan, resumeKey), job.epochs);
  return ledger.startStream(job, request.rank, request.worldSize, plan.segmentOf);
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
  if (checkpoint === undefined) return points;
  // The plan checked every token of the checkpoint: reading them again cannot fail.
  for (const entry of checkpoint.ranks) {
    if (entry.resumeToken.length === 0) {
      points.push({
        epoch: entry.epoch,
        rank: entry.rank,
        worldSize: checkpoint.worldSize,
        batchIndex: 0,
      });
      continue;
    }
    const token = readResumeToken(resumeKey, entry.resumeToken);
    points.push({
      epoch: token.state.epoch,
      rank: entry.rank,
      worldSize: checkpoint.worldSize,
      segment: token.base,
      batchIndex: token.state.nextBatchIndex,
    });
  }
  return points;
}
