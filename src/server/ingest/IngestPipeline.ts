import pLimit from 'p-limit';
import type { IngestSamplesRequest__Output } from '../../generated/scylla_loader/v1/IngestSamplesRequest.js';
import type { IngestSamplesResponse } from '../../generated/scylla_loader/v1/IngestSamplesResponse.js';
import type { SkippedSample } from '../../generated/scylla_loader/v1/SkippedSample.js';
import { invalidArgument, type SampleWriter, type WritableSample } from '../../core/index.js';
import { toIngestSample, type IngestSampleRules } from '../rpc/toIngestSample.js';
import { undecodableDetails, undecodableReason } from '../rpc/undecodableRequests.js';

/** How much of a call the pipeline holds at once. */
export interface IngestLimits {
  /**
   * Samples of the requests read and not yet answered; past it (or past `pendingBytes`) the
   * call is not read further. One request is always let in, however large.
   */
  pendingSamples: number;
  /** Data and label bytes of the requests read and not yet answered. */
  pendingBytes: number;
  /** Samples being checked or written at once. */
  writesInFlight: number;
}

/** Defaults of {@link IngestLimits}. */
export const DEFAULT_INGEST_LIMITS: IngestLimits = {
  pendingSamples: 512,
  pendingBytes: 64 * 1024 * 1024,
  // As `ingest --concurrency`'s default: enough to hide the database's latency.
  writesInFlight: 128,
};

/** What happened to one sample. */
export type SampleOutcome = 'written' | 'present' | 'skipped';

/** Running figures of a call: everything answered so far. */
export interface IngestFigures {
  requests: number;
  samples: number;
  written: number;
  present: number;
  skipped: number;
  /** Data and label bytes written. */
  bytes: number;
}

/** What an {@link IngestPipeline} works with. */
export interface IngestPipelineOptions {
  writer: Pick<SampleWriter, 'exists' | 'write'>;
  rules: IngestSampleRules;
  policy: 'fail' | 'skip';
  /** Aborts when the call is cancelled: nothing further is read, checked or written. */
  signal: AbortSignal;
  /** Sends a response; resolves once the call took it. */
  respond: (response: IngestSamplesResponse) => Promise<void>;
  /** Told of every sample's outcome as it happens (metrics). */
  onOutcome?: (outcome: SampleOutcome, bytes: number) => void;
  limits?: Partial<IngestLimits>;
}

/** A request read: its samples under way, or the error it is answered with. */
interface Entry {
  index: number;
  samples: number;
  bytes: number;
  /** Settles once every sample is written, present or skipped. */
  work: Promise<{ written: number; present: number; bytes: number }>;
  skipped: SkippedSample[];
}

/**
 * The body of an IngestSamples call after its target: reads the requests, writes their
 * samples concurrently, and answers the requests strictly in order, each once all its samples
 * are written, found present, or skipped.
 *
 * Several requests are in flight at once, within {@link IngestLimits}: while the requests
 * read and not answered hold more samples or bytes than allowed, the call is not read (the
 * handler lets grpc-js read one message ahead at most, and HTTP/2 flow control holds the
 * client), so a fast client cannot fill the loader's memory.
 *
 * A sample against the rules is listed in its request's response under the skip policy;
 * under the fail policy its request writes nothing, the requests before it are answered, and
 * {@link run} rejects with INVALID_ARGUMENT naming the sample, the request and the rule. A
 * write that fails stops everything: no further sample is started, and once the writes
 * already started have settled, {@link run} rejects with that error. A cancel does the same
 * with the signal's reason. Once {@link run} settles, nothing of the call is still writing
 * or answering.
 */
export class IngestPipeline {
  /** Everything answered so far. */
  readonly figures: IngestFigures = {
    requests: 0,
    samples: 0,
    written: 0,
    present: 0,
    skipped: 0,
    bytes: 0,
  };
  readonly #options: IngestPipelineOptions;
  readonly #limits: IngestLimits;
  readonly #limit: ReturnType<typeof pLimit>;
  /** Aborted at the first failure or at the call's cancel. */
  readonly #stop = new AbortController();
  #failure: { error: unknown } | undefined;
  /** Samples being checked or written, by id: a key sent again meanwhile waits for it. */
  readonly #writing = new Map<string, Promise<unknown>>();
  /** Every sample's work, so that {@link run} can wait for all of it. */
  readonly #work = new Set<Promise<unknown>>();
  /** The rules, with whether the call is unlabelled once its first sample is seen. */
  #rules: IngestSampleRules | undefined;
  #pendingSamples = 0;
  #pendingBytes = 0;
  #wakeReader: (() => void) | undefined;

  constructor(options: IngestPipelineOptions) {
    this.#options = options;
    this.#limits = { ...DEFAULT_INGEST_LIMITS, ...options.limits };
    this.#limit = pLimit(this.#limits.writesInFlight);
    const onAbort = (): void => this.#stop.abort(options.signal.reason);
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
  }

  /**
   * Reads `requests` (the call) to its end and answers every request; resolves once the
   * client half-closed and the last request is answered.
   */
  async run(requests: AsyncIterator<IngestSamplesRequest__Output>): Promise<void> {
    // The chain of answers: each waits for the one before, so responses keep request order.
    let answered: Promise<void> = Promise.resolve();
    try {
      for (let index = 1; ; index++) {
        await this.#roomForRequest();
        const next = await this.#unlessStopped(requests.next());
        if (next.done) break;
        const entry = this.#start(next.value, index);
        this.#pendingSamples += entry.samples;
        this.#pendingBytes += entry.bytes;
        answered = answered.then(() => this.#answer(entry));
        // A failed answer stops the reading at once (the chain itself is awaited below).
        answered.catch((error: unknown) => this.#fail(error));
        if (entry.stopsReading) break;
      }
      await answered;
    } catch (error) {
      this.#fail(error);
      await Promise.allSettled([answered, ...this.#work]);
      throw this.#failure?.error ?? error;
    }
  }

  /** Counts a request's samples, checks them, and starts writing the good ones. */
  #start(request: IngestSamplesRequest__Output, index: number): Entry & { stopsReading: boolean } {
    const undecodable = undecodableReason(request);
    if (undecodable !== undefined) {
      const error = invalidArgument(
        `request ${index} of this call: ` +
          undecodableDetails('scylla_loader.v1.LoaderService', 'IngestSamples', undecodable),
      );
      return { ...failedEntry(index, error), stopsReading: true };
    }
    const { policy } = this.#options;
    const good: WritableSample[] = [];
    const skipped: SkippedSample[] = [];
    let bytes = 0;
    for (const sample of request.samples) {
      bytes += sample.data.length + sample.labelBlob.length;
      // The call's first sample says whether the call is labelled (see toIngestSample).
      this.#rules ??= {
        ...this.#options.rules,
        unlabelled: (sample.label ?? null) === null && sample.labelBlob.length === 0,
      };
      const result = toIngestSample(sample, this.#rules);
      if ('sample' in result) {
        good.push(result.sample);
      } else if (policy === 'skip') {
        skipped.push({ sourceKey: sample.sourceKey, reason: result.problem });
      } else {
        const error = invalidArgument(
          `sample ${quoteKey(sample.sourceKey)} in request ${index} of this call ` +
            `${result.problem}; the requests before it are stored, and none of its own ` +
            '(BAD_SAMPLE_POLICY_FAIL stops at the first bad sample; BAD_SAMPLE_POLICY_SKIP ' +
            'leaves such samples out and lists them in the response)',
        );
        return { ...failedEntry(index, error), stopsReading: true };
      }
    }
    for (let i = 0; i < skipped.length; i++) this.#options.onOutcome?.('skipped', 0);
    const outcomes = good.map((sample) => this.#store(sample));
    const work = Promise.all(outcomes).then((all) => {
      const sum = { written: 0, present: 0, bytes: 0 };
      all.forEach((outcome, i) => {
        if (outcome === 'present') {
          sum.present++;
          return;
        }
        sum.written++;
        sum.bytes += good[i]!.data.length + (good[i]!.labelBlob?.length ?? 0);
      });
      return sum;
    });
    // Awaited in order by the chain of answers; never an unhandled rejection meanwhile.
    work.catch(() => undefined);
    return { index, samples: request.samples.length, bytes, work, skipped, stopsReading: false };
  }

  /** Writes one sample unless it is stored already; holds a slot of `writesInFlight`. */
  #store(sample: WritableSample): Promise<'written' | 'present'> {
    const { writer, onOutcome } = this.#options;
    const same = this.#writing.get(sample.id);
    const run = async (): Promise<'written' | 'present'> => {
      this.#throwIfStopped();
      // The same key sent again while the first is under way: stored once, then present.
      if (same !== undefined) {
        await same;
        return 'present';
      }
      if (await writer.exists(sample.id)) return 'present';
      this.#throwIfStopped();
      await writer.write(sample);
      return 'written';
    };
    const outcome = this.#limit(run).then(
      (result) => {
        onOutcome?.(result, result === 'written' ? sampleBytes(sample) : 0);
        return result;
      },
      (error: unknown) => {
        this.#fail(error);
        throw error;
      },
    );
    if (same === undefined) {
      this.#writing.set(sample.id, outcome);
      void outcome.then(
        () => this.#writing.delete(sample.id),
        () => this.#writing.delete(sample.id),
      );
    }
    this.#work.add(outcome);
    outcome.then(
      () => this.#work.delete(outcome),
      () => this.#work.delete(outcome),
    );
    return outcome;
  }

  /** Waits for a request's samples, then sends its response. */
  async #answer(entry: Entry): Promise<void> {
    const done = await entry.work;
    // After a failure the requests done before it are still answered (the client then resends
    // less); after a cancel nothing more is sent.
    this.#options.signal.throwIfAborted();
    const f = this.figures;
    f.requests++;
    f.samples += entry.samples;
    f.written += done.written;
    f.present += done.present;
    f.skipped += entry.skipped.length;
    f.bytes += done.bytes;
    await this.#options.respond({
      acknowledgedRequests: f.requests,
      acknowledgedSamples: f.samples,
      written: f.written,
      alreadyPresent: f.present,
      skipped: f.skipped,
      skippedSamples: entry.skipped,
    });
    this.#pendingSamples -= entry.samples;
    this.#pendingBytes -= entry.bytes;
    this.#wakeReader?.();
  }

  /** Resolves once another request may be read (at once when none is pending). */
  async #roomForRequest(): Promise<void> {
    const { pendingSamples, pendingBytes } = this.#limits;
    while (
      (this.#pendingSamples > 0 || this.#pendingBytes > 0) &&
      (this.#pendingSamples >= pendingSamples || this.#pendingBytes >= pendingBytes)
    ) {
      await this.#unlessStopped(
        new Promise<void>((resolve) => {
          this.#wakeReader = resolve;
        }),
      );
    }
  }

  /** `promise`, or a rejection with the reason as soon as the pipeline stops. */
  #unlessStopped<T>(promise: Promise<T>): Promise<T> {
    const signal = this.#stop.signal;
    // What is raced away may still reject later (a read of a cancelled call).
    promise.catch(() => undefined);
    if (signal.aborted) return Promise.reject(this.#stopReason());
    return new Promise<T>((resolve, reject) => {
      const onStop = (): void => reject(this.#stopReason());
      signal.addEventListener('abort', onStop, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', onStop);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onStop);
          reject(error);
        },
      );
    });
  }

  #fail(error: unknown): void {
    if (this.#stop.signal.aborted) return;
    this.#failure = { error };
    this.#stop.abort(error);
  }

  #stopReason(): unknown {
    return this.#failure?.error ?? this.#stop.signal.reason;
  }

  #throwIfStopped(): void {
    if (this.#stop.signal.aborted) throw this.#stopReason();
  }
}

function failedEntry(index: number, error: unknown): Entry {
  const work = Promise.reject(error);
  work.catch(() => undefined);
  return { index, samples: 0, bytes: 0, work, skipped: [] };
}

function sampleBytes(sample: WritableSample): number {
  return sample.data.length + (sample.labelBlob?.length ?? 0);
}

/** A source key for a message: quoted, and cut when long (keys may be 1024 bytes). */
function quoteKey(key: string): string {
  return JSON.stringify(key.length > 200 ? `${key.slice(0, 200)}...` : key);
}
