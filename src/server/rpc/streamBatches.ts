import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { StreamBatchesRequest__Output } from '../../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type { StreamBatchesResponse } from '../../generated/scylla_loader/v1/StreamBatchesResponse.js';
import {
  LoaderError,
  createStreamDeps,
  emptyStreamFigures,
  openStream,
  type OpenedStream,
  type StreamDeps,
} from '../../core/index.js';
import { toGrpcStatus } from '../errors/toGrpcStatus.js';
import { encodeBatchResponse } from './encodeBatchResponse.js';
import { encodeColumns } from './encodeColumns.js';
import type { ServerContext } from '../ServerContext.js';
import { logMixture, logStreamEnd, logStreamStart, streamLogContext } from './streamLog.js';
import { validateStreamRequest } from './validateStreamRequest.js';
import { oneWriteAhead } from './writeMessage.js';

type Call = grpc.ServerWritableStream<StreamBatchesRequest__Output, StreamBatchesResponse>;

/**
 * The StreamBatches handler: validates the request, opens the stream in the core
 * ({@link openStream}, with the process's {@link StreamDeps}, made once here), and writes its
 * batches with backpressure. Cancellation or the deadline aborts the stream, which then issues
 * no further reads. Every error reaches the client through {@link toGrpcStatus}. Admission and
 * authorization wrap it (see `createLoaderServer`).
 */
export function createStreamBatchesHandler(
  ctx: ServerContext,
): grpc.handleServerStreamingCall<StreamBatchesRequest__Output, StreamBatchesResponse> {
  const deps = createStreamDeps({
    paths: ctx.paths,
    limits: ctx.config,
    idCacheBytes: ctx.config.idCacheBytes,
    resumeKey: ctx.resumeKey,
    settingNames: ctx.settingNames,
    sampleCache: ctx.sampleCache,
    metrics: ctx.metrics,
    heldBytes: ctx.heldBytes,
    readSlots: ctx.readSlots,
    transforms: ctx.transforms,
    ledger: ctx.ledger,
  });
  return (call) => {
    void runStream(ctx, deps, call);
  };
}

async function runStream(ctx: ServerContext, deps: StreamDeps, call: Call): Promise<void> {
  const streamId = randomBytes(6).toString('hex');
  const abort = new AbortController();
  const onCancel = (): void => abort.abort(new LoaderError('CANCELLED', 'cancelled'));
  call.on('cancelled', onCancel);
  const started = performance.now();
  const sent = { bytes: 0, blockedSeconds: 0 };
  let stream: OpenedStream | undefined;
  const figures = () => ({ ...(stream?.figures() ?? emptyStreamFigures()), ...sent });
  let log = ctx.logger.child({ streamId });
  try {
    const req = validateStreamRequest(call.request, ctx.config);
    log = log.child(streamLogContext(req));
    logStreamStart(log, req, call.getPeer());
    stream = await openStream(req, deps, abort.signal, {
      onCheckpoint: (summary) =>
        log.info(
          { event: 'job_checkpoint', ...summary },
          'continuing a job checkpoint at another world size',
        ),
    });
    const { plan } = stream;
    logMixture(log, plan);
    // One batch at most waits in the call while the next is assembled (backpressure).
    const writes = oneWriteAhead(call, abort.signal, (blocked) => {
      sent.blockedSeconds += blocked;
      ctx.metrics.clientBlockedSeconds.inc(blocked);
    });
    for await (const { batch, resumeToken, columns, recorded } of stream.batches) {
      // A batch handed out just as the call was cancelled (or ended by shutdown) is dropped:
      // writing after the call ended would lose the status the client must see.
      abort.signal.throwIfAborted();
      const { message, bytes } = encodeBatchResponse(
        batch,
        resumeToken,
        ctx.config.maxMessageBytes,
        plan.tensor,
        plan.mixed,
        columns && encodeColumns(columns),
        req.transform?.masks === true,
      );
      await writes.settle();
      // A job's batch goes out only once its ledger row is written: its write ran while the
      // previous batch was being sent.
      if (recorded) await recorded;
      abort.signal.throwIfAborted();
      if (Number.isFinite(batch.firstArrivalAt)) {
        ctx.metrics.batchAssemblySeconds.observe((performance.now() - batch.firstArrivalAt) / 1000);
      }
      // Already encoded: the service's serializer passes a Buffer through (createLoaderServer).
      writes.write(message);
      sent.bytes += bytes;
      ctx.metrics.batchesSent.inc();
      ctx.metrics.samplesSent.inc(batch.samples.length);
      ctx.metrics.bytesSent.inc(bytes);
    }
    await writes.settle();
    call.end();
    logStreamEnd(log, 'OK', started, figures());
  } catch (err) {
    const cause = abort.signal.aborted ? abort.signal.reason : err;
    const st = toGrpcStatus(cause, { streamId });
    if (st.code === grpc.status.INTERNAL) log.error({ err }, 'stream failed unexpectedly');
    logStreamEnd(log, grpc.status[st.code] ?? String(st.code), started, figures(), st.details);
    if (!abort.signal.aborted) call.emit('error', st);
  } finally {
    call.off('cancelled', onCancel);
  }
}
