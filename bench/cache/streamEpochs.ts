import { LoaderClient } from '../../src/client/index.js';

/** One job's stream of one epoch. @internal */
export interface EpochJob {
  seed: number;
  epoch: number;
}

/** What one job's stream received. @internal */
export interface EpochJobResult extends EpochJob {
  samples: number;
  /** Distinct sample ids received (equal to `samples` when each came once). */
  distinctIds: number;
  bytes: number;
  /** From the call to its last batch. */
  wallSeconds: number;
  /** From the call to its first batch: the stream's set-up, paid once per stream. */
  firstBatchSeconds: number;
}

/**
 * Streams epoch `epoch` of split `all` of `dataset` for every job at once, each job a trainer
 * with a client (its own connections) of its own, out of order with the server's prefetch
 * (the defaults), touching every sample. Resolves when all are done: their results, the wall
 * time from the first call to the last batch, and whether every job got each sample of the
 * split exactly once. `onSamples` hears of every batch (progress).
 *
 * The trainers run in this process, not in child processes as in `bench stream`: between
 * two epochs the benchmark reads the loader's counters, and epoch 0 must be the first thing
 * the loader ever reads (a client child warms up before it is timed, which would read).
 * This process does nothing else meanwhile.
 *
 * @internal
 */
export async function streamEpochs(options: {
  address: string;
  dataset: string;
  batchSize: number;
  /** Samples of the split: what each job must receive. */
  samples: number;
  jobs: readonly EpochJob[];
  onSamples?: (samples: number) => void;
  signal?: AbortSignal | undefined;
}): Promise<{ jobs: EpochJobResult[]; wallSeconds: number; exactlyOnce: boolean }> {
  const t0 = performance.now();
  const jobs = await Promise.all(
    options.jobs.map(async (job): Promise<EpochJobResult> => {
      const client = new LoaderClient(options.address);
      try {
        const ids = new Set<string>();
        let samples = 0;
        let bytes = 0;
        let firstBatchSeconds = Number.NaN;
        const started = performance.now();
        for await (const batch of client.streamBatches(
          {
            dataset: options.dataset,
            split: 'all',
            batchSize: options.batchSize,
            seed: job.seed,
            firstEpoch: job.epoch,
            epochs: 1,
          },
          options.signal ? { signal: options.signal } : {},
        )) {
          if (samples === 0) firstBatchSeconds = (performance.now() - started) / 1000;
          for (const sample of batch.samples) bytes += sample.length;
          for (const id of batch.ids) ids.add(id);
          samples += batch.samples.length;
          options.onSamples?.(batch.samples.length);
        }
        const wallSeconds = (performance.now() - started) / 1000;
        return { ...job, samples, distinctIds: ids.size, bytes, wallSeconds, firstBatchSeconds };
      } finally {
        client.close();
      }
    }),
  );
  return {
    jobs,
    wallSeconds: (performance.now() - t0) / 1000,
    exactlyOnce: jobs.every((j) => j.samples === options.samples && j.distinctIds === j.samples),
  };
}
