import cassandra from 'cassandra-driver';
import { LoaderError } from '../errors/LoaderError.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import type { ResumeState } from '../resume/resumeToken.js';
import type { AssembledBatch } from './AssembledBatch.js';
import { DeliveryTracker } from './DeliveryTracker.js';
import type { FetchedSample } from './FetchedSample.js';

/** How a stream's batches are made. */
export interface BatchAssemblerOptions {
  batchSize: number;
  ordering: 'out-of-order' | 'in-order';
  /** A sample without a row: `fail` ends the stream with DATA_LOSS, `skip` leaves it out. */
  missing: 'fail' | 'skip';
  metrics: Pick<LoaderMetrics, 'missingSamples'>;
}

/**
 * Turns the samples of an epoch, arriving in any order, into batches. Out of order, a batch is
 * whichever `batchSize` samples arrived, lowest positions first (an arrived straggler leaves
 * in the very next batch, which keeps the delivered positions above the lowest undelivered one,
 * the resume token, bounded); in order, it is the next `batchSize` positions, and waits for
 * them. The epoch's last batch may be short (`drop_last` is applied before, to the epoch's
 * positions). A sample without a row is DATA_LOSS or, with `missing: 'skip'`, counted and
 * left out. Each batch carries the resume state right after it.
 *
 * Pure bookkeeping: the caller says what arrived and when, and asks for a batch.
 */
export class BatchAssembler {
  private epochNumber = 0;
  private length = 0;
  private tracker = new DeliveryTracker();
  private nextBatchIndex = 0;
  /** Arrived samples, out-of-order mode. */
  private arrived: FetchedSample[] = [];
  /** Arrived samples by position, in-order mode. */
  private readonly arrivedByPosition = new Map<number, FetchedSample>();
  /**
   * Positions skipped and not yet accounted in a batch: without a row (`missing`) or not
   * decodable by the stream's transform (`undecodable`).
   */
  private readonly skipped = new Map<number, 'missing' | 'undecodable'>();
  /** Arrival time of every position arrived (or skipped) and not yet delivered. */
  private readonly arrivalTimes = new Map<number, number>();

  constructor(private readonly opts: BatchAssemblerOptions) {}

  /**
   * Starts epoch `epoch`, of `length` positions, where `resume` says (nothing delivered when
   * absent). Whatever was held of the previous epoch is dropped.
   */
  startEpoch(epoch: number, length: number, resume?: ResumeState): void {
    this.epochNumber = epoch;
    this.length = length;
    this.tracker = new DeliveryTracker(resume);
    this.nextBatchIndex = resume?.nextBatchIndex ?? 0;
    this.arrived = [];
    this.arrivedByPosition.clear();
    this.skipped.clear();
    this.arrivalTimes.clear();
  }

  /** The epoch being assembled. */
  get epoch(): number {
    return this.epochNumber;
  }

  /** Lowest position of the epoch not yet delivered. */
  get low(): number {
    return this.tracker.low;
  }

  /** True once every position of the epoch was delivered. */
  get epochDone(): boolean {
    return this.tracker.count >= this.length;
  }

  /**
   * Positions holding data until sent. Skipped (missing) positions hold nothing and do not
   * fill a batch, so they are left out: counting them in a window could fill it with positions
   * no batch will take, and the stream would stall.
   */
  get held(): number {
    return this.arrivalTimes.size - this.skipped.size;
  }

  /** True once `position` was sent in a batch. */
  isDelivered(position: number): boolean {
    return this.tracker.isDelivered(position);
  }

  /** True once a position arrived, was skipped, or was delivered (a second answer is dropped). */
  isResolved(position: number): boolean {
    return this.arrivalTimes.has(position) || this.tracker.isDelivered(position);
  }

  /** Takes a sample that arrived at `now` (performance.now()); its position must be unresolved. */
  add(sample: FetchedSample, now: number): void {
    this.arrivalTimes.set(sample.position, now);
    if (this.opts.ordering === 'in-order') this.arrivedByPosition.set(sample.position, sample);
    else this.arrived.push(sample);
  }

  /**
   * Applies the missing-sample policy to an unresolved position whose id has no row.
   *
   * @returns the DATA_LOSS error that ends the stream (`fail`), or undefined when the position
   *   is skipped and counted (`skip`).
   */
  missingRow(position: number, id: Buffer, keyspace: string, now: number): LoaderError | undefined {
    if (this.opts.missing === 'fail') {
      return new LoaderError(
        'DATA_LOSS',
        `sample ${new cassandra.types.Uuid(id).toString()} of the split has no row in ` +
          `${keyspace}.samples; re-run the ingest, or ask for ` +
          'missing_sample_policy SKIP to leave such samples out',
      );
    }
    this.opts.metrics.missingSamples.inc();
    this.markSkipped(position, 'missing', now);
    return undefined;
  }

  /**
   * Leaves out an unresolved position whose sample could not be decoded (the bad-image policy
   * `skip`): it is delivered as skipped, counted in its batch's `skippedUndecodable`.
   */
  undecodable(position: number, now: number): void {
    this.markSkipped(position, 'undecodable', now);
  }

  private markSkipped(position: number, why: 'missing' | 'undecodable', now: number): void {
    this.skipped.set(position, why);
    this.arrivalTimes.set(position, now);
  }

  /** Takes the next batch if one is ready, and marks its positions delivered. */
  take(): AssembledBatch | undefined {
    const { batchSize } = this.opts;
    const resolved = this.tracker.count + this.arrivalTimes.size;
    const epochResolved = resolved === this.length;
    let taken: FetchedSample[];
    let skippedNow: number[];
    if (this.opts.ordering === 'out-of-order') {
      if (this.arrived.length < batchSize && !epochResolved) return undefined;
      // Lowest positions first: an arrived straggler leaves in the very next batch, which
      // keeps the delivered positions above the lowest undelivered one (the token) bounded.
      this.arrived.sort((a, b) => a.position - b.position);
      taken = this.arrived.splice(0, batchSize);
      skippedNow = [...this.skipped.keys()];
    } else {
      taken = [];
      skippedNow = [];
      let p = this.tracker.low;
      while (taken.length < batchSize && p < this.length) {
        if (!this.tracker.isDelivered(p)) {
          const s = this.arrivedByPosition.get(p);
          if (s) taken.push(s);
          else if (this.skipped.has(p)) skippedNow.push(p);
          else return undefined;
        }
        p++;
      }
      for (const s of taken) this.arrivedByPosition.delete(s.position);
    }
    if (taken.length === 0 && skippedNow.length === 0) return undefined;

    let firstArrivalAt = Infinity;
    for (const s of taken) {
      firstArrivalAt = Math.min(firstArrivalAt, this.arrivalTimes.get(s.position)!);
      this.arrivalTimes.delete(s.position);
      this.tracker.markDelivered(s.position);
    }
    let skippedMissing = 0;
    for (const p of skippedNow) {
      firstArrivalAt = Math.min(firstArrivalAt, this.arrivalTimes.get(p)!);
      if (this.skipped.get(p) === 'missing') skippedMissing++;
      this.skipped.delete(p);
      this.arrivalTimes.delete(p);
      this.tracker.markDelivered(p);
    }
    const lastInEpoch = this.tracker.count === this.length;
    const index = this.nextBatchIndex++;
    const resume: ResumeState = lastInEpoch
      ? { epoch: this.epochNumber + 1, low: 0, deliveredAbove: [], nextBatchIndex: 0 }
      : {
          epoch: this.epochNumber,
          low: this.tracker.low,
          deliveredAbove: this.tracker.deliveredAbove(),
          nextBatchIndex: this.nextBatchIndex,
        };
    return {
      epoch: this.epochNumber,
      index,
      samples: taken,
      skippedMissing,
      skippedUndecodable: skippedNow.length - skippedMissing,
      lastInEpoch,
      resume,
      firstArrivalAt,
    };
  }
}
