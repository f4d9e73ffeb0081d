import { randomUUID } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import type { Column } from '../../generated/scylla_loader/v1/Column.js';
import type { GetLedgerRequest__Output } from '../../generated/scylla_loader/v1/GetLedgerRequest.js';
import type { GetLedgerResponse } from '../../generated/scylla_loader/v1/GetLedgerResponse.js';
import type { Timestamp } from '../../generated/google/protobuf/Timestamp.js';
import {
  type BatchColumn,
  findLedgerSample,
  invalidArgument,
  LoaderError,
  notFound,
  readLedgerBatches,
  type LedgerJob,
  type LedgerSampleRef,
  validateJobId,
} from '../../core/index.js';
import { logCallError } from '../errors/logCallError.js';
import { toGrpcStatus } from '../errors/toGrpcStatus.js';
import type { ServerContext } from '../ServerContext.js';
import { primaryClient } from './unaryHandler.js';

type Handler = (
  call: grpc.ServerUnaryCall<GetLedgerRequest__Output, GetLedgerResponse>,
  callback: grpc.sendUnaryData<GetLedgerResponse>,
  allowed: (datasets: readonly string[]) => void,
) => void;

/**
 * The GetLedger handler: a range of one rank's recorded batches of an epoch (with each sample's
 * source key and the metadata columns asked for), or every appearance of one sample in a job.
 * The job's datasets are checked against the caller's grant (`allowed`) once its row is read.
 * An unknown job is NOT_FOUND; a bad job id, range or sample INVALID_ARGUMENT.
 */
export function createGetLedgerHandler(ctx: ServerContext): Handler {
  return (call, callback, allowed) => {
    const abort = new AbortController();
    const onCancel = (): void => abort.abort(new LoaderError('CANCELLED', 'cancelled'));
    call.on('cancelled', onCancel);
    getLedger(ctx, call.request, allowed, abort.signal)
      .then(
        (response) => callback(null, response),
        (err: unknown) => {
          const callId = randomUUID();
          const sent = toGrpcStatus(err, { callId });
          const log = ctx.logger.child({ callId, rpc: 'GetLedger', job: call.request.jobId });
          logCallError(log, err, sent, 'GetLedger failed');
          callback(sent);
        },
      )
      .finally(() => call.off('cancelled', onCancel));
  };
}

async function getLedger(
  ctx: ServerContext,
  req: GetLedgerRequest__Output,
  allowed: (datasets: readonly string[]) => void,
  signal: AbortSignal,
): Promise<GetLedgerResponse> {
  const jobId = validateJobId(req.jobId);
  const job = await ctx.ledger.readJob(jobId);
  if (job === undefined) {
    throw notFound(
      `job ${jobId} has no training ledger: no stream named it, or its rows expired ` +
        '(--ledger-ttl-days) or were dropped',
    );
  }
  allowed(job.sources.map((s) => s.dataset));
  const head = { jobId, sources: job.sources };
  if (req.query === 'batches' && req.batches) {
    const { epoch, rank, firstBatch, lastBatch } = req.batches;
    const views = await readLedgerBatches(
      ctx.ledger,
      job,
      { epoch, rank, first: firstBatch, last: Math.max(firstBatch, lastBatch) },
      {
        client: primaryClient(ctx),
        columns: req.columns,
        includeSuperseded: req.includeSuperseded,
        readAttempts: ctx.config.readAttempts,
        retryBaseMs: ctx.config.retryBaseMs,
        signal,
      },
    );
    return {
      ...head,
      batches: views.map((v) => ({
        epoch: v.epoch,
        rank: v.rank,
        worldSize: v.worldSize,
        index: v.index,
        ids: v.ids,
        sourceIndexes: v.sourceIndexes ?? [],
        sourceKeys: v.sourceKeys.map((k) => k ?? ''),
        columns: v.columns.map(toColumnMessage),
        resumeToken: v.resumeToken,
        sentAt: timestamp(v.sentAt),
        superseded: v.superseded,
        reshardedFrom: segmentText(v.segment),
        skipped: v.skipped,
      })),
    };
  }
  if (req.query === 'sample' && req.sample) {
    const found = await findLedgerSample(
      ctx.ledger,
      job,
      sampleRef(req.sample, job),
      req.includeSuperseded,
    );
    return {
      ...head,
      sampleId: found.sampleId,
      appearances: found.appearances.map((a) => ({
        epoch: a.epoch,
        rank: a.rank,
        worldSize: a.worldSize,
        batchIndex: a.batchIndex,
        position: a.position,
        sentAt: timestamp(a.sentAt),
        superseded: a.superseded,
        reshardedFrom: segmentText(a.segment),
        skipped: a.skipped,
      })),
    };
  }
  throw invalidArgument('GetLedger needs a query: batches (a range of batches) or sample');
}

function sampleRef(
  sample: NonNullable<GetLedgerRequest__Output['sample']>,
  job: LedgerJob,
): LedgerSampleRef {
  if (sample.sample === 'id') return { id: sample.id ?? Buffer.alloc(0) };
  if (sample.sample === 'sourceKey') {
    return {
      sourceKey: sample.sourceKey ?? '',
      ...(sample.dataset ? { dataset: sample.dataset } : {}),
    };
  }
  throw invalidArgument(`a sample query of job ${job.jobId} needs an id or a source key`);
}

/** The hex digest of a re-sharded epoch's checkpoint; empty for an ordinary epoch. */
function segmentText(segment: Buffer): string {
  return segment.every((b) => b === 0) ? '' : segment.toString('hex');
}

function timestamp(date: Date): Timestamp {
  const ms = date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds: String(seconds), nanos: (ms - seconds * 1000) * 1_000_000 };
}

/** A metadata column as a `Column` message: nulls as zero values with their bits set. */
export function toColumnMessage(column: BatchColumn): Column {
  const n = column.values.length;
  let nulls: Buffer | undefined;
  column.values.forEach((v, i) => {
    if (v !== null) return;
    nulls ??= Buffer.alloc(Math.ceil(n / 8));
    nulls[i >> 3]! |= 1 << (i & 7);
  });
  const values = column.values;
  const base: Column = {
    name: column.name,
    type: `COLUMN_TYPE_${column.type.toUpperCase()}` as Column['type'],
    ...(nulls ? { nulls } : {}),
  };
  switch (column.type) {
    case 'text':
      return { ...base, textValues: values.map((v) => (v === null ? '' : String(v))) };
    case 'int':
      return { ...base, intValues: values.map((v) => (v === null ? 0 : Number(v))) };
    case 'bigint':
      return { ...base, bigintValues: values.map((v) => (v === null ? '0' : String(v))) };
    case 'double':
      return { ...base, doubleValues: values.map((v) => (v === null ? 0 : Number(v))) };
    case 'boolean':
      return { ...base, booleanValues: values.map((v) => v === true) };
  }
}
