import { status, type ClientDuplexStream } from '@grpc/grpc-js';
import type { IngestSamplesRequest } from '../generated/scylla_loader/v1/IngestSamplesRequest.js';
import type { IngestSamplesResponse__Output } from '../generated/scylla_loader/v1/IngestSamplesResponse.js';
import type { IngestTarget } from '../generated/scylla_loader/v1/IngestTarget.js';
import { pauseBeforeReconnect } from './backoff.js';
import { ClientError } from './ClientError.js';
import type { IngestOptions, IngestProgress, IngestSummary } from './IngestOptions.js';
import type { IngestRequestSource, PreparedRequest } from './IngestRequestSource.js';
import { isRetryable } from './isRetryable.js';
import type { ReconnectOptions } from './LoaderClientOptions.js';
import { toClientError } from './toClientError.js';

type IngestCall = ClientDuplexStream<IngestSamplesRequest, IngestSamplesResponse__Output>;

/** What {@link resumableIngest} needs from the client. @internal */
export interface ResumableIngestContext {
  /** Starts one IngestSamples call. */
  open(deadline: Date | number | undefined): IngestCall;
  /** Method path, for errors. */
  path: string;
  reconnect: Required<ReconnectOptions>;
  /** The call's target, from the first request (whose samples may infer the columns). */
  target: (first: PreparedRequest | undefined) => IngestTarget;
  requestsInFlight: number;
}

/** An error of the caller's sample source: passed on as it is, never retried. */
class SourceError {
  constructor(readonly error: unknown) {}
}

/** Everything an ingest knows across its calls. */
interface IngestState {
  source: IngestRequestSource;
  /** Requests sent (or to send) and not acknowledged yet, in order: sent again after a break. */
  unacknowledged: PreparedRequest[];
  /** A read of the source under way, kept across a break so no request is lost. */
  pendingRead: Promise<PreparedRequest | undefined> | undefined;
  exhausted: boolean;
  target: IngestTarget | undefined;
  totals: IngestSummary;
}

/**
 * Sends an ingest's requests over IngestSamples calls and returns what the server did. At
 * most `requestsInFlight` requests are unacknowledged at a time; the source is read only
 * when one is acknowledged. Each request is kept until acknowledged: when a call breaks for a
 * reason a new call may not meet again ({@link isRetryable}), a new call, after a backoff,
 * sends the target and then every unacknowledged request again, in order. Writes are
 * idempotent (an id derives from its key, and a stored sample is not written again), so the
 * dataset ends with every sample once; a sample written by the broken call but not
 * acknowledged counts as already present. After `reconnect.attempts` breaks in a row without
 * an acknowledgement, the last error is thrown.
 *
 * @internal
 */
export async function resumableIngest(
  source: IngestRequestSource,
  context: ResumableIngestContext,
  options: IngestOptions,
  totals: IngestSummary,
): Promise<IngestSummary> {
  const { signal, deadline, onReconnect } = options;
  const { attempts, retryOnResourceExhausted } = context.reconnect;
  const deadlineMs = deadline === undefined ? Infinity : new Date(deadline).getTime();
  const state: IngestState = {
    source,
    unacknowledged: [],
    pendingRead: undefined,
    exhausted: false,
    target: undefined,
    totals,
  };
  let failures = 0;
  try {
    signal?.throwIfAborted();
    for (;;) {
      const call = context.open(deadline);
      const cancel = (): void => call.cancel();
      signal?.addEventListener('abort', cancel, { once: true });
      let error: ClientError;
      try {
        return await runCall(call, state, context, options, () => (failures = 0));
      } catch (caught) {
        signal?.throwIfAborted();
        if (caught instanceof SourceError) throw caught.error;
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
      if (failures > attempts) throw error;
      await pauseBeforeReconnect(failures, error, {
        reconnect: context.reconnect,
        deadlineMs,
        onReconnect,
        signal,
      });
    }
  } finally {
    source.close();
  }
}

/**
 * One call: sends the unacknowledged requests again, then new ones as acknowledgements make
 * room, half-closes after the last, and returns the summary at the response with `done`.
 */
async function runCall(
  call: IngestCall,
  state: IngestState,
  context: ResumableIngestContext,
  options: IngestOptions,
  onAcknowledged: () => void,
): Promise<IngestSummary> {
  const responses = new ResponseQueue(call);
  /** What each request of this call carried: null for a request with the target alone. */
  const sent: Array<PreparedRequest | null> = [];
  let previous = { written: 0, present: 0, skipped: 0, samples: 0 };
  let ended = false;

  const send = async (request: PreparedRequest | null): Promise<void> => {
    const message: IngestSamplesRequest = { samples: request?.samples ?? [] };
    if (sent.length === 0) message.target = state.target;
    sent.push(request);
    if (!call.write(message)) await responses.race(new Promise((r) => call.once('drain', r)));
  };
  const read = async (): Promise<PreparedRequest | undefined> => {
    if (state.pendingRead === undefined) {
      state.pendingRead = state.source.next().catch((error: unknown) => {
        throw new SourceError(error);
      });
      // Left behind when the call fails first: read by the next call, or by no one.
      state.pendingRead.catch(() => undefined);
    }
    const request = await responses.race(state.pendingRead);
    state.pendingRead = undefined;
    return request;
  };
  /** Reads and sends requests while fewer than `requestsInFlight` are unacknowledged. */
  const fill = async (): Promise<void> => {
    while (!state.exhausted && state.unacknowledged.length < context.requestsInFlight) {
      const request = await read();
      if (state.target === undefined) state.target = context.target(request);
      if (request === undefined) {
        state.exhausted = true;
        break;
      }
      state.unacknowledged.push(request);
      await send(request);
    }
    if (state.exhausted && !ended) {
      // A dataset is made even by an ingest of no samples: the target goes alone.
      if (sent.length === 0) await send(null);
      call.end();
      ended = true;
    }
  };

  for (const request of [...state.unacknowledged]) await send(request);
  await fill();
  for (;;) {
    const response = await responses.next();
    if (response === undefined) {
      throw new ClientError(
        context.path,
        // Retryable: a new call resends what this one did not acknowledge.
        status.UNAVAILABLE,
        'the call ended without its last response',
      );
    }
    if (response.done) {
      if (state.unacknowledged.length > 0) {
        throw new Error(
          `${context.path}: the server said done with ${state.unacknowledged.length} ` +
            'requests unacknowledged',
        );
      }
      state.totals.datasetSamples = Number(response.datasetSamples);
      // The status follows at once: waiting for it keeps the cancel in `finally` from
      // reaching the loader as a cancelled call. Everything is stored: a failure now is moot.
      await responses.next().catch(() => undefined);
      return state.totals;
    }
    const index = Number(response.acknowledgedRequests);
    const request = sent[index - 1];
    if (request === undefined || (request !== null && request !== state.unacknowledged[0])) {
      throw new Error(`${context.path}: acknowledgement of request ${index}, which was not sent`);
    }
    if (request !== null) state.unacknowledged.shift();
    const now = {
      written: Number(response.written),
      present: Number(response.alreadyPresent),
      skipped: Number(response.skipped),
      samples: Number(response.acknowledgedSamples),
    };
    const totals = state.totals;
    totals.acknowledged += now.samples - previous.samples;
    totals.written += now.written - previous.written;
    totals.alreadyPresent += now.present - previous.present;
    totals.skipped += now.skipped - previous.skipped;
    for (const s of response.skippedSamples) {
      totals.skippedSamples.push({ sourceKey: s.sourceKey, reason: s.reason });
    }
    previous = now;
    onAcknowledged();
    options.onProgress?.(progressOf(totals));
    await fill();
  }
}

function progressOf(totals: IngestSummary): IngestProgress {
  return {
    acknowledged: totals.acknowledged,
    written: totals.written,
    alreadyPresent: totals.alreadyPresent,
    skipped: totals.skipped,
  };
}

/**
 * The responses of a call as a queue read one at a time, and its failure as a rejection of
 * whatever waits on the call (a response, a drain, a read of the source).
 */
class ResponseQueue {
  readonly #items: IngestSamplesResponse__Output[] = [];
  #ended = false;
  #failure: { error: unknown } | undefined;
  #wake: (() => void) | undefined;
  readonly #failed: Promise<never>;

  constructor(call: IngestCall) {
    let reject!: (error: unknown) => void;
    this.#failed = new Promise<never>((_, r) => (reject = r));
    this.#failed.catch(() => undefined);
    call.on('data', (response: IngestSamplesResponse__Output) => {
      this.#items.push(response);
      this.#wake?.();
    });
    call.on('end', () => {
      this.#ended = true;
      this.#wake?.();
    });
    call.on('error', (error: unknown) => {
      this.#failure ??= { error };
      reject(error);
      this.#wake?.();
    });
  }

  /** The next response; undefined when the call ended without one; rejects once it failed. */
  async next(): Promise<IngestSamplesResponse__Output | undefined> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) return item;
      if (this.#failure) throw this.#failure.error;
      if (this.#ended) return undefined;
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  /** `promise`, unless the call fails first. */
  race<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.#failed]);
  }
}
