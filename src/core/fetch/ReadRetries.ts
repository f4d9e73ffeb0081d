import { unavailable } from '../errors/LoaderError.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import { retryableDriverError } from '../db/retryableDriverError.js';
import { retryBackoffMs } from './retryBackoffMs.js';

/** The retry settings of a stream. */
export interface ReadRetriesOptions {
  /** Attempts per read before the stream fails with UNAVAILABLE. */
  readAttempts: number;
  /** Backoff before the first retry (see {@link retryBackoffMs}). */
  retryBaseMs: number;
  metrics: Pick<LoaderMetrics, 'dbRetries' | 'dbRequestsInFlight'>;
  /** Jitter source, [0, 1). */
  random?: () => number;
}

/**
 * What happens to a failed read: an error that is not the database's passing trouble ends the
 * stream as it is (INTERNAL), a retryable one is tried again after a backoff, and the
 * `readAttempts`-th failure ends the stream with UNAVAILABLE (the trainer resumes with its
 * last token). A read waiting out its backoff counts as a request in flight (it holds its
 * place in the window and in the in-flight gauge) until its next attempt starts.
 */
export class ReadRetries {
  private readonly timers = new Set<NodeJS.Timeout>();
  private count = 0;

  constructor(private readonly opts: ReadRetriesOptions) {}

  /** Reads waiting out a backoff. */
  get waiting(): number {
    return this.count;
  }

  /**
   * Handles the failure of attempt number `attempt` of a read over the route `pathName`.
   *
   * @param retry - issues the next attempt; called after the backoff unless closed before.
   * @returns the error that ends the stream, or undefined when a retry was scheduled.
   */
  afterFailure(err: unknown, attempt: number, pathName: string, retry: () => void): unknown {
    const trouble = retryableDriverError(err);
    if (trouble === undefined) return err;
    if (attempt >= this.opts.readAttempts) {
      // The driver's own message names hosts; the client gets the description, the log the cause.
      return unavailable(
        `reading from the database failed after ${attempt} attempt(s): ${trouble}; ` +
          'resume with the last resume token',
        err,
      );
    }
    const { metrics } = this.opts;
    metrics.dbRetries.inc({ path: pathName });
    const backoff = retryBackoffMs(attempt, this.opts.retryBaseMs, this.opts.random);
    this.count++;
    metrics.dbRequestsInFlight.inc();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.count--;
      metrics.dbRequestsInFlight.dec();
      retry();
    }, backoff);
    this.timers.add(timer);
    return undefined;
  }

  /** Cancels every pending retry and takes them off the in-flight gauge. */
  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.opts.metrics.dbRequestsInFlight.dec(this.count);
    this.count = 0;
  }
}
