import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { IngestSamplesRequest__Output } from '../../generated/scylla_loader/v1/IngestSamplesRequest.js';
import type { IngestSamplesResponse } from '../../generated/scylla_loader/v1/IngestSamplesResponse.js';
import {
  checkIngestCaps,
  consistencyHint,
  DatasetRecounts,
  datasetNamespace,
  ensureDatasetSchema,
  type IngestCapRules,
  readDatasetInfo,
  invalidArgument,
  LoaderError,
  parseReplication,
  recordIngestStart,
  retryableDriverError,
  SampleWriter,
  unavailable,
  type Replication,
} from '../../core/index.js';
import { toGrpcStatus } from '../errors/toGrpcStatus.js';
import { IngestPipeline, type IngestFigures } from '../ingest/IngestPipeline.js';
import {
  CONSISTENCY_VARIABLES,
  consistencyLevels,
  ingestCapRules,
} from '../ingest/ingestSettingNames.js';
import type { ServerContext } from '../ServerContext.js';
import { requestFieldOf } from './requestFieldOf.js';
import { toIngestTarget } from './toIngestTarget.js';
import { refusedForSize, undecodableDetails, undecodableReason } from './undecodableRequests.js';
import { writeMessage } from './writeMessage.js';

/** The request field of an ingest option: the column types are the request's `columns`. */
const ingestRequestFieldOf = (option: string): string =>
  option === 'declaredTypes' ? 'columns' : requestFieldOf(option);

type Call = grpc.ServerDuplexStream<IngestSamplesRequest__Output, IngestSamplesResponse>;

/**
 * The IngestSamples handler: checks the first request's target, makes the dataset (with the
 * server's `--replication`) or adds the target's columns, records the ingest, and runs the
 * call's requests through an {@link IngestPipeline} (samples written concurrently, requests
 * answered in order, memory bounded). After the client half-closes and every request is
 * answered, it recounts the dataset (unless the call wrote nothing; calls of a dataset ending
 * together share one recount, see {@link DatasetRecounts}) and sends the last response, with
 * `done` set. What a call may add to the dataset's schema and info row is capped
 * (`IngestCaps`): a target over a cap is refused before any schema change.
 *
 * Errors: the client's mistakes are INVALID_ARGUMENT naming what to fix; database trouble a
 * later attempt can cure is UNAVAILABLE saying to resend from the first request not
 * acknowledged (writes are idempotent, so that is exact); anything else is INTERNAL with the
 * real error logged. A cancel (or the deadline) stops reading and starts no further write.
 */
export function createIngestSamplesHandler(
  ctx: ServerContext,
): grpc.handleBidiStreamingCall<IngestSamplesRequest__Output, IngestSamplesResponse> {
  const setup: IngestSetup = {
    replication: parseReplication(ctx.config.replication),
    caps: ingestCapRules(ctx.config),
    recounts: new DatasetRecounts({ onRecount: () => ctx.metrics.datasetRecounts.inc() }),
  };
  return (call) => {
    // Never rejects: every error ends the call with a status (see runIngest's catch).
    void runIngest(ctx, setup, call);
  };
}

/** What every IngestSamples call of a server shares. */
interface IngestSetup {
  replication: Replication;
  caps: IngestCapRules;
  recounts: DatasetRecounts;
}

/** The dataset named by a call's first request, for the authorization of its grant. */
export function ingestDatasetOf(first: IngestSamplesRequest__Output): string | undefined {
  return first.target?.dataset;
}

async function runIngest(ctx: ServerContext, setup: IngestSetup, call: Call): Promise<void> {
  const { replication, caps } = setup;
  const callId = randomBytes(6).toString('hex');
  const abort = new AbortController();
  const onCancel = (): void => abort.abort(new LoaderError('CANCELLED', 'call cancelled'));
  call.on('cancelled', onCancel);
  if (call.cancelled) onCancel();
  readOneAhead(call);
  const started = performance.now();
  let log = ctx.logger.child({ callId, rpc: 'IngestSamples' });
  let dataset: string | undefined;
  let pipeline: IngestPipeline | undefined;
  // Not for-await: leaving that loop would destroy the call before its status is sent.
  const requests = call.iterator({
    destroyOnReturn: false,
  }) as AsyncIterator<IngestSamplesRequest__Output>;
  try {
    const client = ctx.paths[0]!.client;
    const first = await unlessAborted(requests.next(), abort.signal);
    // A first request that did not decode names no dataset: the client's bytes, not ours.
    const undecodable = first.done ? undefined : undecodableReason(first.value);
    if (undecodable !== undefined) {
      throw refusedForSize(first.value)
        ? new LoaderError('RESOURCE_EXHAUSTED', `the first request is too large: ${undecodable}`)
        : invalidArgument(
            undecodableDetails('scylla_loader.v1.LoaderService', 'IngestSamples', undecodable),
          );
    }
    const target = toIngestTarget(first.done ? null : first.value.target);
    checkIngestCaps(target, caps);
    dataset = target.dataset;
    log = log.child({ dataset });
    log.info(
      {
        event: 'ingest_start',
        columns: Object.fromEntries(target.columns.map((c) => [c.name, c.type])),
        labelNames: target.labelNames.length,
        policy: target.policy,
        source: target.source,
        peer: call.getPeer(),
      },
      'ingest start',
    );
    // One schema change at a time per dataset in this process: two calls adding the same
    // column, or making the same new dataset, would otherwise race (the loser's ALTER fails).
    const name = target.dataset;
    const labelNames = await oneAtATime(name, async () => {
      await ensureDatasetSchema(client, {
        dataset: name,
        replication,
        columns: target.columns,
        caps,
        // An RPC caller declares the types in the request's `columns`.
        nameOption: ingestRequestFieldOf,
      });
      return recordIngestStart(
        client,
        name,
        {
          labelNames: target.labelNames,
          columns: Object.fromEntries(target.columns.map((c) => [c.name, c.type])),
          source: target.source,
        },
        caps,
      );
    });
    // Into an empty dataset, a key sent twice in this call is caught by the writer's own
    // record of what it was given; otherwise existence is asked of the database.
    const writer = await SampleWriter.open(client, { dataset, columns: target.columns });
    abort.signal.throwIfAborted();
    pipeline = new IngestPipeline({
      writer,
      rules: {
        columns: new Map(target.columns.map((c) => [c.name, c.type])),
        labelNames,
        namespace: datasetNamespace(dataset),
      },
      policy: target.policy,
      signal: abort.signal,
      respond: (response) => writeMessage(call, response, abort.signal),
      onOutcome: (outcome, bytes) => {
        ctx.metrics.ingestSamples.inc({ outcome });
        if (bytes > 0) ctx.metrics.ingestBytes.inc(bytes);
      },
    });
    await pipeline.run(withFirst(first, requests));
    // A recount scans the whole metadata table: a call that wrote nothing reads the stored
    // count instead, and calls of the dataset ending together share one recount.
    const datasetSamples =
      pipeline.figures.written > 0
        ? (await setup.recounts.recount(client, dataset)).sampleCount
        : (await readDatasetInfo(client, dataset)).sampleCount;
    abort.signal.throwIfAborted();
    const f = pipeline.figures;
    await writeMessage(
      call,
      {
        acknowledgedRequests: f.requests,
        acknowledgedSamples: f.samples,
        written: f.written,
        alreadyPresent: f.present,
        skipped: f.skipped,
        done: true,
        datasetSamples,
      },
      abort.signal,
    );
    call.end();
    logEnd(log, 'OK', started, pipeline.figures);
  } catch (err) {
    const cause = abort.signal.aborted
      ? abort.signal.reason
      : resendHint(err, dataset, pipeline, consistencyLevels(ctx.config.db));
    const st = toGrpcStatus(cause, { callId });
    if (st.code === grpc.status.INTERNAL) log.error({ err }, 'ingest failed unexpectedly');
    else if (st.code === grpc.status.UNAVAILABLE) log.warn({ err }, 'ingest failed');
    logEnd(log, grpc.status[st.code] ?? String(st.code), started, pipeline?.figures, st.details);
    if (!abort.signal.aborted) call.emit('error', st);
  } finally {
    call.off('cancelled', onCancel);
  }
}

/**
 * Database trouble a retry can cure as UNAVAILABLE saying what the client does next: resend
 * from the first request not acknowledged. Anything else is returned as it is.
 */
function resendHint(
  err: unknown,
  dataset: string | undefined,
  pipeline: IngestPipeline | undefined,
  levels: Parameters<typeof consistencyHint>[1],
): unknown {
  const trouble = retryableDriverError(err);
  if (trouble === undefined) return err;
  const acknowledged = pipeline?.figures.requests ?? 0;
  const hint = consistencyHint(err, levels, CONSISTENCY_VARIABLES);
  return unavailable(
    `writing to dataset ${dataset ?? '(not named yet)'} failed: ${trouble}${hint}; the ` +
      `${acknowledged} requests acknowledged are stored: resend from request ` +
      `${acknowledged + 1} of this call in a new call (writes are idempotent)`,
    err,
  );
}

/** `promise`, or a rejection with the signal's reason as soon as it aborts. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  // A read of a cancelled call may never settle, or reject later: neither may leak.
  promise.catch(() => undefined);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The call's requests with the first, already read, put back in front. */
async function* withFirst(
  first: IteratorResult<IngestSamplesRequest__Output>,
  rest: AsyncIterator<IngestSamplesRequest__Output>,
): AsyncGenerator<IngestSamplesRequest__Output, void, undefined> {
  if (first.done) return;
  yield first.value;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/**
 * Lets grpc-js read one request ahead of the handler at most (its object-mode streams buffer
 * 16 by default, which for 32 MiB requests is half a gigabyte per call); the pipeline's own
 * bounds then hold. If a Node version hides the field, the default bound applies.
 */
function readOneAhead(call: Call): void {
  const state = (call as unknown as { _readableState?: { highWaterMark?: unknown } })
    ._readableState;
  if (state && typeof state.highWaterMark === 'number') state.highWaterMark = 1;
}

function logEnd(
  log: ServerContext['logger'],
  code: string,
  started: number,
  figures: IngestFigures | undefined,
  details?: string,
): void {
  const seconds = (performance.now() - started) / 1000;
  const f = figures ?? { requests: 0, samples: 0, written: 0, present: 0, skipped: 0, bytes: 0 };
  log.info(
    {
      event: 'ingest_end',
      code,
      ...(details ? { details } : {}),
      requests: f.requests,
      samples: f.samples,
      written: f.written,
      present: f.present,
      skipped: f.skipped,
      bytes: f.bytes,
      seconds: Number(seconds.toFixed(3)),
      samplesPerSecond: Math.round(f.samples / Math.max(seconds, 1e-6)),
      megabytesPerSecond: Number((f.bytes / 1e6 / Math.max(seconds, 1e-6)).toFixed(1)),
    },
    'ingest end',
  );
}

const schemaChanges = new Map<string, Promise<unknown>>();

/** Runs `work` after every earlier `oneAtATime` of the same key in this process has ended. */
async function oneAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = schemaChanges.get(key) ?? Promise.resolve();
  const mine = before.then(work, work);
  const settled = mine.catch(() => undefined);
  schemaChanges.set(key, settled);
  try {
    return await mine;
  } finally {
    if (schemaChanges.get(key) === settled) schemaChanges.delete(key);
  }
}
