import type { Logger } from 'pino';
import type { StreamFigures, StreamPlan, StreamRequest } from '../../core/index.js';

/** What every line of a stream names: its source (or sources) and rank. */
export function streamLogContext(req: StreamRequest): Record<string, unknown> {
  // A stream of a job carries its id on every line, so its log joins its ledger.
  const job = req.jobId === undefined ? {} : { job: req.jobId };
  const use = req.replay
    ? { replay: req.replay }
    : req.skipBatches
      ? { skip: req.skipBatches }
      : {};
  return req.mix
    ? {
        sources: req.mix.sources.map((s) => `${s.dataset}/${s.split}`),
        rank: req.rank,
        ...job,
        ...use,
      }
    : { dataset: req.dataset, split: req.split, rank: req.rank, ...job, ...use };
}

/** The `stream_start` line: what the client asked for. */
export function logStreamStart(log: Logger, req: StreamRequest, peer: string): void {
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
      ...(req.columns?.length ? { columns: req.columns } : {}),
      peer,
    },
    'stream start',
  );
}

/** The `mixture` line of a mixed stream: its epoch's positions, each source's quota and size. */
export function logMixture(log: Logger, plan: StreamPlan): void {
  if (!plan.mixed) return;
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

/** What the server adds to a stream's figures: bytes written and time blocked on the client. */
export interface SentFigures {
  bytes: number;
  blockedSeconds: number;
}

/** The `stream_end` line: the status, the stream's figures and its rates. */
export function logStreamEnd(
  log: Logger,
  code: string,
  started: number,
  figures: StreamFigures & SentFigures,
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
