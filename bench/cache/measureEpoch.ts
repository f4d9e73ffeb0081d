import type { CacheEpoch, StreamEndFigures } from './CacheBenchReport.js';
import { counterDelta, readLoaderCounters, type LoaderCounters } from './loaderCounters.js';
import type { CacheServe } from './startCacheServe.js';
import { streamEpochs, type EpochJob } from './streamEpochs.js';

/** What the parts of one `bench cache` run share. @internal */
export interface CacheBenchRun {
  batchSize: number;
  signal: AbortSignal | undefined;
  onSpawn: (pid: number) => void;
  /** The report's notes: what a reader of the figures must know. */
  notes: string[];
  /** Hears of every batch's samples (progress). */
  onSamples: (count: number) => void;
  /** A line above the progress display. */
  log: (line: string) => void;
}

/** One epoch measured, the counters after it, and each job's own rate. @internal */
export interface MeasuredEpoch {
  epoch: CacheEpoch;
  after: LoaderCounters;
  jobRates: number[];
}

/**
 * Streams one epoch for `jobs` (one stream each, at once) through `serve`, and reads what the
 * loader did for it: its counters' growth since `before` (scraped right after the last batch),
 * its cache's gauges, and the streams' `stream_end` lines. A stream that did not get every
 * sample exactly once becomes a note. @internal
 */
export async function measureEpoch(
  run: CacheBenchRun,
  serve: CacheServe,
  split: { dataset: string; samples: number },
  before: LoaderCounters,
  jobs: readonly EpochJob[],
): Promise<MeasuredEpoch> {
  const ended = serve.streamEnds.length;
  const streamed = await streamEpochs({
    address: serve.address,
    dataset: split.dataset,
    batchSize: run.batchSize,
    samples: split.samples,
    jobs,
    onSamples: run.onSamples,
    signal: run.signal,
  });
  const { counters: after, gauges } = await readLoaderCounters(serve.metricsAddress);
  // The loader logs a stream's end just after its last batch; wait for those lines a little.
  for (let i = 0; i < 200 && serve.streamEnds.length < ended + jobs.length; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const reads = counterDelta(before, after);
  const hits = reads.cacheHitsMemory + reads.cacheHitsDisk;
  const lookups = hits + reads.cacheMisses + reads.cacheSharedReads;
  const received = streamed.jobs.reduce((s, j) => s + j.samples, 0);
  const epoch = jobs[0]!.epoch;
  if (!streamed.exactlyOnce) {
    run.notes.push(
      `epoch ${epoch} of ${split.dataset}: a stream did not get each of the ${split.samples} ` +
        `samples exactly once (${streamed.jobs.map((j) => `${j.samples}, ${j.distinctIds} distinct`).join('; ')})`,
    );
  }
  return {
    epoch: {
      epoch,
      samples: received,
      bytes: streamed.jobs.reduce((s, j) => s + j.bytes, 0),
      wallSeconds: streamed.wallSeconds,
      samplesPerSecond: received / streamed.wallSeconds,
      firstBatchSeconds: Math.max(...streamed.jobs.map((j) => j.firstBatchSeconds)),
      exactlyOnce: streamed.exactlyOnce,
      reads,
      hitRatio: lookups > 0 ? hits / lookups : undefined,
      gauges,
      streamEnds: serve.streamEnds.slice(ended).map(streamEndFigures),
    },
    after,
    jobRates: streamed.jobs.map((j) => j.samples / j.wallSeconds),
  };
}

/**
 * Epochs 0 to `epochs - 1` of one job (seed `seed`), each a stream of its own, through
 * `serve`, counters scraped between them so that every read falls in some epoch. Logs a line
 * per epoch (with `describe`'s addition) and calls `afterEpoch` after each. @internal
 */
export async function measureEpochs(
  run: CacheBenchRun,
  serve: CacheServe,
  options: {
    dataset: string;
    samples: number;
    epochs: number;
    seed: number;
    label: string;
    afterEpoch?: () => Promise<string>;
  },
): Promise<CacheEpoch[]> {
  const out: CacheEpoch[] = [];
  let before = (await readLoaderCounters(serve.metricsAddress)).counters;
  for (let epoch = 0; epoch < options.epochs; epoch++) {
    run.signal?.throwIfAborted();
    const m = await measureEpoch(run, serve, options, before, [{ seed: options.seed, epoch }]);
    before = m.after;
    out.push(m.epoch);
    const more = options.afterEpoch ? `; ${await options.afterEpoch()}` : '';
    run.log(`${options.label}, ${epochLine(m.epoch)}${more}`);
  }
  return out;
}

/** The figures of a `stream_end` record this report keeps. */
function streamEndFigures(record: Record<string, unknown>): StreamEndFigures {
  const keys: (keyof StreamEndFigures)[] = [
    'samples',
    'groupReads',
    'cacheHits',
    'cacheMisses',
    'cacheSharedReads',
    'cacheHitRatio',
  ];
  return Object.fromEntries(
    keys.flatMap((k) => (typeof record[k] === 'number' ? [[k, record[k]]] : [])),
  );
}

/** An epoch's progress line: its rate, what the loader read, what the cache had. @internal */
export function epochLine(e: CacheEpoch): string {
  const r = e.reads;
  return (
    `epoch ${e.epoch}${e.epoch === 0 ? ' (cold)' : ''}: ${Math.round(e.samplesPerSecond)} samples/s, ` +
    `${r.dbQueries} database queries` +
    (e.hitRatio === undefined
      ? ''
      : `, ${r.cacheMisses} samples read, ${r.cacheSharedReads} shared, ` +
        `hits ${r.cacheHitsMemory} memory / ${r.cacheHitsDisk} disk (${(100 * e.hitRatio).toFixed(1)}%)`)
  );
}
