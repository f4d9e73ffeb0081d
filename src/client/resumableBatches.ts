import type { ClientReadableStream } from '@grpc/grpc-js';
import type { StreamBatchesRequest } from '../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type { StreamBatchesResponse__Output } from '../generated/scylla_loader/v1/StreamBatchesResponse.js';
import { pauseBeforeReconnect } from './backoff.js';
import { ClientError } from './ClientError.js';
import type { DecodedBatch } from './DecodedBatch.js';
import { decodeBatch } from './decodeBatch.js';
import { isRetryable } from './isRetryable.js';
import { limitBuffering } from './limitBuffering.js';
import type { ReconnectOptions } from './LoaderClientOptions.js';
import type { StreamCallOptions } from './StreamCallOptions.js';
import { toClientError } from './toClientError.js';

/** What {@link resumableBatches} needs from the client. @internal */
export interface ResumableBatchesContext {
  /** Starts one StreamBatches call. */
  open(
    request: StreamBatchesRequest,
    deadline: Date | number | undefined,
  ): ClientReadableStream<StreamBatchesResponse__Output>;
  /** Method path, for errors. */
  path: string;
  reconnect: Required<ReconnectOptions>;
  maxBufferedBatches: number;
}

/**
 * The batches of `request`, resuming a broken stream from the token of the last batch
 * yielded (or the request's own token before the first), after a backoff, for as long as
 * failures are retryable ({@link isRetryable}) and fewer than `attempts` in a row.
 *
 * Reading is a `for await` over the grpc-js stream, so nothing is read while the consumer
 * does not ask (beyond `maxBufferedBatches`); `finally` cancels the call whichever way the
 * loop ends (consumer `break`, error, abort), so the server sees a cancel and no call leaks.
 *
 * @internal
 */
export async function* resumableBatches(
  request: StreamBatchesRequest,
  context: ResumableBatchesContext,
  options: StreamCallOptions = {},
): AsyncGenerator<DecodedBatch, void, undefined> {
  const { signal, deadline, onReconnect } = options;
  const { attempts, retryOnResourceExhausted } = context.reconnect;
  const deadlineMs = deadline === undefined ? Infinity : new Date(deadline).getTime();
  let resumeToken = request.resumeToken;
  // A skip applies once, where it was asked for: a reconnect after a batch (perhaps in a
  // later epoch) continues from that batch's token without it.
  let { skipBatches } = request;
  let failures = 0;
  signal?.throwIfAborted();
  for (;;) {
    const call = context.open({ ...request, resumeToken, skipBatches }, deadline);
    limitBuffering(call, context.maxBufferedBatches);
    const cancel = (): void => call.cancel();
    signal?.addEventListener('abort', cancel, { once: true });
    let error: ClientError;
    try {
      for await (const response of call as AsyncIterable<StreamBatchesResponse__Output>) {
        const batch = decodeBatch(response.batch, context.path, request.sources?.length ?? 0);
        // After an abort, batches already buffered must not come out before the abort error.
        signal?.throwIfAborted();
        failures = 0;
        resumeToken = batch.resumeToken;
        skipBatches = null;
        yield batch;
      }
      return;
    } catch (caught) {
      signal?.throwIfAborted();
      const wrapped = toClientError(caught, context.path);
      if (!(wrapped instanceof ClientError) || !isRetryable(wrapped, retryOnResourceExhausted)) {
        throw wrapped;
      }
      error = wrapped;
    } finally {
      signal?.removeEventListener('abort', cancel);
      call.cancel();
    }
    failures += 1;
    if (failures > attempts) {
      throw error;
    }
    await pauseBeforeReconnect(failures, error, {
      reconnect: context.reconnect,
      deadlineMs,
      onReconnect,
      signal,
    });
  }
}
