import { randomBytes } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { StreamBatchesRequest__Output } from '../../generated/scylla_loader/v1/StreamBatchesRequest.js';
import type { StreamBatchesResponse } from '../../generated/scylla_loader/v1/StreamBatchesResponse.js';
import {
  LoaderError,
  BatchFetcher,
  createMeanSizeCache,
  createPermutationCache,
  createRemainderCache,
  createSplitIdsCache,
  meanSampleBytes,
  planStream,
  readDatasetGeneration,
  resolveSplit,
  type PlannedSource,
  type StreamPlanDeps,
  type StreamTransformer,
} from '../../core/index.js';
import { toGrpcStatus } from '../errors/toGrpcStatus.js';
import { encodeBatchResponse } from './encodeBatchResponse.js';
import type { ServerContext } from '../ServerContext.js';
import { validateStreamRequest } from './validateStreamRequest.js';
import { writeMessage } from './writeMessage.js';

type Call = grpc.ServerWritableStream<StreamBatchesRequest__Output, StreamBatchesResponse>;

/**
 * The StreamBatches handler: validates the request, plans the stream in the core
 * ({@link planStream}: the split's ids through a per-process bounded cache, the resume token
 * and job checkpoint checked, the fetch options), runs the fetch engine and writes its batches
 * with backpressure. Cancellation or the deadline aborts the engine, which then issues no
 * further reads. Every error reaches the client through {@link toGrpcStatus}.
 */
export function createStreamBatchesHandler(
  ctx: ServerContext,
): grpc.handleServerStreamingCall<StreamBatchesRequest__Output, StreamBatchesResponse> {
  const splits = createSplitIdsCache(ctx.config.idCacheBytes);
  const sizes = createMeanSizeCache((dataset) => meanSampleBytes(ctx.paths[0]!.client, dataset));
  const shared: Omit<StreamPlanDeps, 'transformer' | 'onCheckpoint'> = {
    splitIds: (dataset, split, signal) =>
      resolveSplit(ctx.paths[0]!.client, splits, dataset, split, signal),
    meanSampleBytes: sizes,
    ...(ctx.sampleCache ? { sampleCache: ctx.sampleCache } : {}),
    datasetGeneration: (dataset) => readDatasetGeneration(ctx.paths[0]!.client, dataset),
    permutations: createPermutationCache(ctx.config.idCacheBytes),
    remainders: createRemainderCache(ctx.config.idCacheBytes),
    limits: ctx.config,
    resumeKey: ctx.resumeKey,
    settingNames: ctx.settingNames,
  };
  return (call) => {
    void runStream(ctx, shared, call);
  };
}

async function runStream(
  ctx: ServerContext,
  shared: Omit<StreamPlanDeps, 'transformer' | 'onCheckpoint'>,
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
  /** The stream's cache look ups, when the loader has a sample cache. */
  let cacheFigures: BatchFetcher['cacheFigures'] | undefined;
  /** Samples sent from each source (a mixture's are in the end line). */
  let perSource: (PlannedSource & { sent: number })[] = [];
  let mixed = false;
  const endFigures = (): typeof figures & Record<string, unknown> => ({
    ...figures,
    ...cacheEndFigures(cacheFigures),
    ...(mixed
      ? {
          sources: perSource.map((s) => ({
            dataset: s.dataset,
            split: s.split,
            samples: s.sent,
          })),
        }
      : {}),
  });
  let log = ctx.logger.child({ streamId });
  let transformer: StreamTransformer | undefined;
  const transformFigures = (): void => {
    if (transformer) figures.transformSeconds = Number(transformer.threadSeconds.toFixed(3));
  };
  try {
    const req = validateStreamRequest(call.request, ctx.config);
    log = log.child(
      req.mix
        ? {
            sources: req.mix.sources.map((s) => `${s.dataset}/${s.split}`),
            rank: req.rank,
          }
        : { dataset: req.dataset, split: req.split, rank: req.rank },
    );
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
        ...(req.mix
          ? {
              weights: req.mix.sources.map((s) => s.weight),
              repeat: req.mix.sources.map((s) => s.repeat),
              samplesPerEpoch: req.mix.samplesPerEpoch,
            }
          : {}),
        ...(req.transform ? { transform: req.transform } : {}),
        peer: call.getPeer(),
      },
      'stream start',
    );
    const plan = await planStream(
      {
        ...shared,
        transformer: (spec, seed) => {
          transformer = ctx.transforms.forStream(spec, seed, abort.signal);
          return transformer;
        },
        onCheckpoint: (summary) =>
          log.info(
            { event: 'job_checkpoint', ...summary },
            'continuing a job checkpoint at another world size',
          ),
      },
      req,
      abort.signal,
    );
    figures.groupReads = plan.fetch.groupReads;
    // Samples sent per source, for the end line of a mixture and the per-source metric.
    perSource = plan.sources.map((s) => ({ ...s, sent: 0 }));
    mixed = plan.mixed;
    const sourceCounters = plan.sources.map((s) =>
      ctx.metrics.sourceSamplesSent.labels({ dataset: s.dataset, split: s.split }),
    );
    if (plan.mixed) {
      log.info(
        {
          event: 'mixture',
          positionsPerEpoch: plan.positions,
          quotas: plan.sources.map((s) => s.quota),
          sizes: plan.sources.map((s) => s.count),
        },
        'mixed epoch planned',
      );
    }
    const fetcher = new BatchFetcher({
      ...plan.fetch,
      budget: ctx.heldBytes,
      paths: ctx.paths,
      metrics: ctx.metrics,
      signal: abort.signal,
    });
    if (plan.fetch.cache) cacheFigures = fetcher.cacheFigures;

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
    // Each next epoch's order is made off the event loop before the engine starts the epoch.
    for await (const batch of plan.readyAhead(fetcher.batches())) {
      // A batch handed out just as the call was cancelled (or ended by shutdown) is dropped:
      // writing after the call ended would lose the status the client must see.
      abort.signal.throwIfAborted();
      const { message, bytes } = encodeBatchResponse(
        batch,
        plan.resumeToken(batch.resume),
        ctx.config.maxMessageBytes,
        plan.tensor,
        plan.mixed,
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
      if (plan.mixed) {
        const counts = new Array<number>(perSource.length).fill(0);
        for (const s of batch.samples) counts[s.source]!++;
        counts.forEach((c, i) => {
          if (c === 0) return;
          perSource[i]!.sent += c;
          sourceCounters[i]!.inc(c);
        });
      } else {
        perSource[0]!.sent += batch.samples.length;
        sourceCounters[0]!.inc(batch.samples.length);
      }
      ctx.metrics.bytesSent.inc(bytes);
    }
    await settle();
    call.end();
    transformFigures();
    logEnd(log, 'OK', started, endFigures());
  } catch (err) {
    const cause = abort.signal.aborted ? abort.signal.reason : err;
    const st = toGrpcStatus(cause, { streamId });
    if (st.code === grpc.status.INTERNAL) log.error({ err }, 'stream failed unexpectedly');
    transformFigures();
    logEnd(log, grpc.status[st.code] ?? String(st.code), started, endFigures(), st.details);
    if (!abort.signal.aborted) call.emit('error', st);
  } finally {
    call.off('cancelled', onCancel);
  }
}

/**
 * The end line's cache figures: hits, samples read from the database, samples taken from
 * another stream's read, and the hit ratio of the look ups (none without a cache).
 */
function cacheEndFigures(
  cache: { hits: number; misses: number; shared: number } | undefined,
): Record<string, number> {
  if (!cache) return {};
  const lookups = cache.hits + cache.misses + cache.shared;
  return {
    cacheHits: cache.hits,
    cacheMisses: cache.misses,
    cacheSharedReads: cache.shared,
    cacheHitRatio: lookups > 0 ? Number((cache.hits / lookups).toFixed(4)) : 0,
  };
}

function logEnd(
  log: ServerContext['logger'],
  code: string,
  started: number,
  figures: { batches: number; samples: number; bytes: number } & Record<string, unknown>,
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
