import type { GetLedgerRequest } from '../generated/scylla_loader/v1/GetLedgerRequest.js';
import type { GetLedgerResponse__Output } from '../generated/scylla_loader/v1/GetLedgerResponse.js';
import type { Timestamp__Output } from '../generated/google/protobuf/Timestamp.js';
import { decodeColumns } from './decodeColumns.js';
import type { LedgerQuery, LedgerResult } from './LedgerTypes.js';
import { uuidFromBytes } from './uuidFromBytes.js';

/** The GetLedger request of a job and query. @internal */
export function toLedgerRequest(jobId: string, query: LedgerQuery): GetLedgerRequest {
  const common = {
    jobId,
    columns: query.columns ?? [],
    includeSuperseded: query.includeSuperseded ?? false,
  };
  if ('batches' in query) {
    const { epoch, rank, first, last } = query.batches;
    return { ...common, batches: { epoch, rank, firstBatch: first, lastBatch: last ?? first } };
  }
  const s = query.sample;
  return {
    ...common,
    sample:
      'id' in s
        ? { id: Buffer.from(s.id) }
        : { sourceKey: s.sourceKey, ...(s.dataset ? { dataset: s.dataset } : {}) },
  };
}

/** A GetLedger response as the SDK hands it out. @internal */
export function toLedgerResult(r: GetLedgerResponse__Output, path: string): LedgerResult {
  return {
    jobId: r.jobId,
    sources: r.sources.map((s) => ({ dataset: s.dataset, split: s.split })),
    batches: r.batches.map((b) => {
      const n = b.ids.length / 16;
      const ids: string[] = [];
      for (let i = 0; i < n; i++) ids.push(uuidFromBytes(b.ids, i * 16));
      return {
        epoch: b.epoch,
        rank: b.rank,
        worldSize: b.worldSize,
        index: b.index,
        ids,
        sourceIndexes: b.sourceIndexes,
        sourceKeys: b.sourceKeys,
        columns: decodeColumns(b.columns, n, (message) => {
          throw new Error(`${path}: batch ${b.index} of the ledger: ${message}`);
        }),
        resumeToken: b.resumeToken,
        sentAt: dateOf(b.sentAt),
        superseded: b.superseded,
        reshardedFrom: b.reshardedFrom,
        skipped: b.skipped,
      };
    }),
    ...(r.sampleId.length === 16 ? { sampleId: uuidFromBytes(r.sampleId) } : {}),
    appearances: r.appearances.map((a) => ({
      epoch: a.epoch,
      rank: a.rank,
      worldSize: a.worldSize,
      batchIndex: a.batchIndex,
      position: a.position,
      sentAt: dateOf(a.sentAt),
      superseded: a.superseded,
      reshardedFrom: a.reshardedFrom,
      skipped: a.skipped,
    })),
  };
}

function dateOf(t: Timestamp__Output | null): Date {
  return new Date(t ? Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6) : 0);
}
