import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { StreamBatchesRequest__Output } from '../../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type { StreamBatchesResponse } from '../../generated/scylla_loader/v1/StreamBatchesResponse.js';
import {
  LoaderError,
  adaptiveWindowMax,
  BatchFetcher,
  createPermutationCache,
  createRemainderCache,
  type RemainderCache,
  createSplitIdsCache,
  decodeResumeToken,
  encodeResumeToken,
  invalidArgument,
  jobFingerprint,
  NO_BASE,
  requestFingerprint,
  resolveJobCheckpoint,
  type ResolvedCheckpoint,
  type ResumeState,
  epochShard,
  groupReadSize,
  meanSampleBytes,
  type PermutationCache,
  rawSampleShape,
  resolveSplit,
  type SplitIdsCache,
  type StreamTransformer,
} from '../../core/index.js';
import { toGrpcStatus } from '../errors/toGrpcStatus.js';
import { encodeBatchResponse } from './encodeBatchResponse.js';
import type { ServerContext } from '../ServerContext.js';
import { type StreamRequest, validateStreamRequest } from './validateStreamRequest.js';
import { writeMessage } from './writeMessage.js';

type Call = grpc.ServerWritableStream<StreamBatchesRequest__Output, StreamBatchesResponse>;

/**
 * The StreamBatches handler: validates the request, loads the split's ids (cached per process,
 * bounded), checks the resume token, runs the fetch engine and writes its batches with
 * backpressure. Cancellation or the deadline aborts the engine, which then issues no further
 * reads. Every error reaches the client through {@link toGrpcStatus}.
 */
export function createStreamBatchesHandler(
  ctx: ServerContext,
): grpc.handleServerStreamingCall<StreamBatchesRequest__Output, StreamBatchesResponse> {
  const splits = createSplitIdsCache(ctx.config.idCacheBytes);
  const permutations = createPermutationCache(ctx.config.idCacheBytes);
  const remainders = createRemainderCache(ctx.config.idCacheBytes);
  const sizes = createMeanSizeCache();
  return (call) => {
    void runStream(ctx, splits, permutations, remainders, sizes, call);
  };
}

/** Mean sample size by dataset (undefined: not recorded), looked up at most once a minute. */
type MeanSizeCache = (
  client: Parameters<typeof meanSampleBytes>[0],
  dataset: string,
) => Promise<number | undefined>;

/**
 * Remembers each dataset's mean sample size for a minute: a stream start does not pay a
 * read for it, and a later ingest is seen soon (it only decides whether reads are grouped).
 */
function createMeanSizeCache(): MeanSizeCache {
  const TTL_MS = 60_000;
  const known = new Map<string, { at: number; mean: Promise<number | undefined> }>();
  return (client, dataset) => {
    const now = performance.now();
    const hit = known.get(dataset);
    if (hit && now - hit.at < TTL_MS) return hit.mean;
    const mean = meanSampleBytes(client, dataset);
    known.set(dataset, { at: now, mean });
    // A failed lookup is not remembered: the next stream asks again.
    mean.catch(() => known.delete(dataset));
    return mean;
  };
}

async function runStream(
  ctx: ServerContext,
  splits: SplitIdsCache,
  permutations: PermutationCache,
  remainders: RemainderCache,
  sizes: MeanSizeCache,
  call: Call,
): Promise<void> {
  const streamId = randomBytes(6).toString('hex');
  const abort = new AbortController();
  const onCancel = (): void => abort.abort(new LoaderError('CANCELLED', 'cancelled'));
  call.on('cancelled', onCancel);
  const started = performance.now();
  const figures = {
    batches: 0,
    samples: 0,
    bytes: 0,
    skippedMissing: 0,
    skippedUndecodable: 0,
    blockedSeconds: 0,
    /** Seconds this stream's transforms ran on the thread pool (one thread each: CPU time). */
    transformSeconds: 0,
    /** The fetch window in positions at the last batch (an adaptive one may have grown). */
    windowPositions: 0,
    /** Samples per read query (1: single-row reads). */
    groupReads: 1,
  };
  let log = ctx.logger.child({ streamId });
  let transformer: StreamTransformer | undefined;
  const transformFigures = (): void => {
    if (transformer) figures.transformSeconds = Number(transformer.threadSeconds.toFixed(3));
  };
  try {
    const req = validateStreamRequest(call.request, ctx.config);
    log = log.child({ dataset: req.dataset, split: req.split, rank: req.rank });
    log.info(
      {
        event: 'stream_start',
        batchSize: req.batchSize,
        seed: req.seed.toString(),
        firstEpoch: req.firstEpoch,
        epochs: req.epochs,
        worldSize: req.worldSize,
        shardRule: req.shardRule,
        shuffle: req.shuffle,
        ordering: req.ordering,
        prefetch: req.prefetch,
        adaptivePrefetch: req.adaptivePrefetch,
        resumed: req.resumeToken.length > 0,
        ...(req.transform ? { transform: req.transform } : {}),
        peer: call.getPeer(),
      },
      'stream start',
    );
    const primary = ctx.paths[0]!.client;
    const split = await resolveSplit(primary, splits, req.dataset, req.split);
    const job = jobFingerprint({ ...req, splitContentHash: split.contentHash });
    const legacyFor = (owner: { rank: number; worldSize: number }): Buffer =>
      requestFingerprint({ ...req, splitContentHash: split.contentHash, ...owner });
    transformer = req.transform
      ? ctx.transforms.forStream(req.transform, req.seed, abort.signal)
      : undefined;
    const tensor = req.transform ? rawSampleShape(req.transform) : undefined;
    const elastic = req.jobCheckpoint
      ? resolveJobCheckpoint(req.jobCheckpoint, {
          key: ctx.resumeKey,
          job,
          legacyFor,
          n: split.count,
          rules: req,
        })
      : undefined;
    if (elastic) checkCheckpointEpoch(elastic, req.firstEpoch, req.epochs);
    const resume = startingPoint(ctx.resumeKey, req, job, legacyFor(req), elastic);
    // The positions the checkpoint's world left of its epoch: computed once, used by that
    // epoch's shard only (later epochs shard the whole split at this world size).
    const remainder =
      elastic && elastic.layers.length > 0
        ? remainders.memo(`${split.contentHash}/${elastic.digest.toString('hex')}`, {
            context: { n: split.count, layers: elastic.layers, rules: req },
          })
        : undefined;
    const resharded = (epoch: number): boolean =>
      remainder !== undefined && epoch === elastic!.epoch;
    if (elastic) {
      log.info(
        {
          event: 'job_checkpoint',
          epoch: elastic.epoch,
          worlds: elastic.layers.map((l) => l.worldSize),
          remaining: remainder?.length ?? split.count,
        },
        'continuing a job checkpoint at another world size',
      );
    }
    const permute = (n: number, seed: bigint, epoch: number): Uint32Array =>
      permutations.memo(`${split.contentHash}/${n}/${seed}/${epoch}`, {
        context: { n, seed, epoch },
      });
    const groupReads = groupReadSize(
      ctx.config,
      ctx.config.groupReads === 'auto' ? await sizes(primary, req.dataset) : undefined,
    );
    figures.groupReads = groupReads;
    const fetcher = new BatchFetcher({
      keyspace: req.dataset,
      ids: split.ids,
      firstEpoch: req.firstEpoch,
      endEpoch: req.firstEpoch + req.epochs,
      shardOf: (epoch) =>
        epochShard(
          { ...req, n: split.count, epoch },
          permute,
          resharded(epoch) ? remainder : undefined,
        ),
      batchSize: req.batchSize,
      prefetch: req.prefetch,
      ...(req.adaptivePrefetch
        ? {
            adaptiveWindowMax: adaptiveWindowMax(req.batchSize, ctx.config),
          }
        : {}),
      ordering: req.ordering,
      missing: req.missing,
      maxInFlight: ctx.config.maxInFlightPerStream,
      readAttempts: ctx.config.readAttempts,
      retryBaseMs: ctx.config.retryBaseMs,
      groupReads,
      ...(resume ? { resume } : {}),
      ...(transformer ? { transform: transformer } : {}),
      paths: ctx.paths,
      metrics: ctx.metrics,
      signal: abort.signal,
    });

    // At most one batch waits in the call while the next is assembled. The call's own buffer
    // (an object-mode stream: 16 messages before write() says false) would otherwise let a
    // slow client hold 16 batches beyond the window.
    let previous: Promise<void> | undefined;
    const settle = async (): Promise<void> => {
      if (!previous) return;
      const t0 = performance.now();
      await previous;
      const blocked = (performance.now() - t0) / 1000;
      figures.blockedSeconds += blocked;
      ctx.metrics.clientBlockedSeconds.inc(blocked);
    };
    for await (const batch of fetcher.batches()) {
      // A batch handed out just as the call was cancelled (or ended by shutdown) is dropped:
      // writing after the call ended would lose the status the client must see.
      abort.signal.throwIfAborted();
      const token = encodeResumeToken(
        ctx.resumeKey,
        {
          job,
          rank: req.rank,
          worldSize: req.worldSize,
          base: resharded(batch.resume.epoch) ? elastic!.digest : NO_BASE,
        },
        batch.resume,
      );
      const { message, bytes } = encodeBatchResponse(
        batch,
        token,
        ctx.config.maxMessageBytes,
        tensor,
      );
      await settle();
      abort.signal.throwIfAborted();
      if (Number.isFinite(batch.firstArrivalAt)) {
        ctx.metrics.batchAssemblySeconds.observe((performance.now() - batch.firstArrivalAt) / 1000);
      }
      // Already encoded: the service's serializer passes a Buffer through (createLoaderServer).
      previous = writeMessage(call, message, abort.signal);
      previous.catch(() => undefined); // awaited by settle(); never an unhandled rejection
      figures.batches++;
      figures.samples += batch.samples.length;
      figures.bytes += bytes;
      figures.skippedMissing += batch.skippedMissing;
      figures.skippedUndecodable += batch.skippedUndecodable;
      figures.windowPositions = fetcher.windowPositions;
      ctx.metrics.batchesSent.inc();
      ctx.metrics.samplesSent.inc(batch.samples.length);
      ctx.metrics.bytesSent.inc(bytes);
    }
    await settle();
    call.end();
    transformFigures();
    logEnd(log, 'OK', started, figures);
  } catch (err) {
    const cause = abort.signal.aborted ? abort.signal.reason : err;
    const st = toGrpcStatus(cause, { streamId });
    if (st.code === grpc.status.INTERNAL) log.error({ err }, 'stream failed unexpectedly');
    transformFigures();
    logEnd(log, grpc.status[st.code] ?? String(st.code), started, figures, st.details);
    if (!abort.signal.aborted) call.emit('error', st);
  } finally {
    call.off('cancelled', onCancel);
  }
}

/**
 * Where the stream starts: the resume token's state when there is one (a reconnect, maybe
 * within an epoch re-sharded from `elastic`, whose digest the token must carry), else the
 * start of what the job checkpoint left, else nothing (first_epoch).
 */
function startingPoint(
  key: Buffer,
  req: StreamRequest,
  job: Buffer,
  legacy: Buffer,
  elastic: ResolvedCheckpoint | undefined,
): ResumeState | undefined {
  if (req.resumeToken.length === 0) {
    return elastic
      ? { epoch: elastic.epoch, low: 0, deliveredAbove: [], nextBatchIndex: 0 }
      : undefined;
  }
  const read = decodeResumeToken(
    key,
    { job, legacy, rank: req.rank, worldSize: req.worldSize },
    req.resumeToken,
  );
  const epoch = read.state.epoch;
  if (elastic && epoch < elastic.epoch) {
    throw invalidArgument(
      `resume token is in epoch ${epoch}, before the job checkpoint's epoch ${elastic.epoch}: ` +
        'pass the token of a stream started from this job_checkpoint, or no token',
    );
  }
  const want =
    elastic && epoch === elastic.epoch && elastic.layers.length > 0 ? elastic.digest : NO_BASE;
  if (!read.base.equals(want)) {
    throw invalidArgument(
      read.base.equals(NO_BASE)
        ? 'resume token is of an ordinary epoch but the request carries a job checkpoint for it; ' +
            'drop job_checkpoint, or pass the token of a stream started from it'
        : 'resume token continues an epoch re-sharded from a job checkpoint: repeat the ' +
            'job_checkpoint that stream was started with, unchanged, along with the token',
    );
  }
  return read.state;
}

/** A checkpoint's epoch lies within the request's epochs (its end: the job is done). */
function checkCheckpointEpoch(
  elastic: ResolvedCheckpoint,
  firstEpoch: number,
  epochs: number,
): void {
  if (elastic.epoch < firstEpoch || elastic.epoch > firstEpoch + epochs) {
    throw invalidArgument(
      `job checkpoint is in epoch ${elastic.epoch}, outside the request's epochs ` +
        `${firstEpoch} to ${firstEpoch + epochs - 1}`,
    );
  }
}

function logEnd(
  log: ServerContext['logger'],
  code: string,
  started: number,
  figures: { batches: number; samples: number; bytes: number },
  details?: string,
): void {
  const seconds = (performance.now() - started) / 1000;
  log.info(
    {
      event: 'stream_end',
      code,
      ...(details ? { details } : {}),
      ...figures,
      seconds: Number(seconds.toFixed(3)),
      samplesPerSecond: Math.round(figures.samples / Math.max(seconds, 1e-6)),
      megabytesPerSecond: Number((figures.bytes / 1e6 / Math.max(seconds, 1e-6)).toFixed(1)),
    },
    'stream end',
  );
}
