import { InFlightTarget, type RouteEstimate } from './InFlightTarget.js';

/**
 * Reads issued for every one completed while the window fills: two, so the reads in flight
 * double each round trip (TCP's slow start) up to the in-flight limit. The ramp of five for
 * four it replaces needed about 9 round trips from 32 reads to 256: at 150 ms, 1.6 s of a
 * stream's start, and `bench latency` (3,000 samples, unpinned, 2 runs each) measured
 * C(150)/C(0) at 0.67-0.69 with it and 0.78 with doubling, the paced trainer stalled 9.0% of
 * its time against 1.8% (docs/performance.md, D). The window's byte bound and the process's
 * held-bytes budget bound what a faster start may hold, as before.
 */
export const RAMP_CREDIT = 2;
/**
 * Reads a stream may issue before any has completed (fewer when its in-flight limit is lower,
 * more when its in-flight floor is higher).
 */
export const RAMP_START = 32;

/** The sizes a stream's window is made from. */
export interface FetchWindowOptions {
  batchSize: number;
  /** Batches worth of positions held in flight or waiting to be sent. */
  prefetch: number;
  /** Positions the window may grow to while the stream starves (absent: it never grows). */
  adaptiveWindowMax?: number;
  /**
   * Reads in flight at most, retries waiting out their backoff included: the stream's ceiling
   * when `inFlightFloor` sizes them, else a fixed allowance.
   */
  maxInFlight: number;
  /**
   * Size the reads in flight from the stream's measured rate and round trip (see
   * {@link InFlightTarget}), from this floor up to `maxInFlight` (absent: `maxInFlight` is a
   * fixed allowance).
   */
  inFlightFloor?: number;
  /** Samples per query when reads are grouped (absent: 1): the floor is in queries. */
  groupReads?: number;
}

/**
 * What stopped a stream's reads the last time it issued them:
 * - `ramp`: the start's ramp (its first round trips);
 * - `target`: the reads in flight its rate and round trip call for (rate x round trip x 2): the
 *   round trip is hidden, the rate is bound elsewhere (database, CPU);
 * - `ceiling`: the per-stream limit on reads in flight (`maxInFlight`): latency-bound;
 * - `window`: reads in flight and transforms fill the window (it grows while the trainer
 *   waits, up to its maximum);
 * - `trainer`: samples waiting to be sent fill the window (a batch or more of them): the
 *   trainer takes no faster (the fetcher tells this from `window`);
 * - `span`: a read that has not arrived keeps the others from reaching further (a straggler);
 * - `bytes`: the stream's bytes bound or the process's held-bytes budget;
 * - `process`: the process-wide cap on reads in flight (see {@link ReadSlots});
 * - `done`: every read of the epoch is issued.
 */
export type ReadBound =
  'ramp' | 'target' | 'ceiling' | 'window' | 'trainer' | 'span' | 'bytes' | 'process' | 'done';

/**
 * How many reads a stream may have going, and how far ahead they may reach: a window of
 * `prefetch x batchSize` positions requested or holding data until sent, a span of twice the
 * window above the lowest position that has not arrived, and a staggered ramp at the start
 * (a first few reads, then two new ones for every one completed, doubling each round trip) so
 * a stream's start does not burst all at once. With an adaptive maximum the window grows while
 * it, and nothing else, starves the stream (see {@link FetchWindow.growIfStarved}).
 *
 * Pure bookkeeping: the caller counts reads and positions and asks; nothing here reads or
 * waits, and nothing allocates, so it costs the per-sample path a few comparisons.
 */
export class FetchWindow {
  private size: number;
  private reach: number;
  private readonly max: number;
  private credits: number;
  /** Reads in flight sized by rate x round trip (absent: `maxInFlight` is fixed). */
  readonly target: InFlightTarget | undefined;
  /** Reads completed since the window last grew. */
  private completedSinceGrowth = 0;
  /** Positions per query: the in-flight limits count queries, credits and the window positions. */
  private readonly perQuery: number;

  constructor(private readonly opts: FetchWindowOptions) {
    this.size = Math.max(1, opts.prefetch * opts.batchSize);
    this.reach = 2 * this.size;
    this.max = Math.max(this.size, opts.adaptiveWindowMax ?? 0);
    // A stream sized by its round trip may start with its floor (two batches' reads): at
    // 150 ms, starting at 32 took two more round trips (300 ms) to reach a floor of 128.
    // Credits count positions; the floor counts queries, of up to `groupReads` positions each.
    const perQuery = Math.max(1, Math.floor(opts.groupReads ?? 1));
    this.perQuery = perQuery;
    this.credits = Math.min(
      Math.max(RAMP_START, (opts.inFlightFloor ?? 0) * perQuery),
      opts.maxInFlight * perQuery,
    );
    this.target =
      opts.inFlightFloor === undefined
        ? undefined
        : new InFlightTarget(opts.inFlightFloor, opts.maxInFlight, performance.now());
  }

  /**
   * Starts the reads in flight from what an earlier stream on the same route measured (see
   * `InFlightTarget.startFrom`), before any read is issued: the ramp's first reads are the
   * target's, and an adaptive window starts large enough for them plus two batches (as
   * `adaptiveWindowMax` sizes its maximum). Like a window grown by starving, it does not shrink
   * within the stream: a paced trainer's stream may keep a window sized for a faster one, within
   * `maxWindowBytes` and the process's held-bytes budget. Shrinking it to the stream's own
   * target once the started rate was gone made the paced trainer of `bench latency` stall more
   * in the second half of its runs (1.5% against 0.6%, 3 rounds each at 150 ms). Nothing
   * changes for a stream whose reads are a fixed allowance.
   */
  startFrom(estimate: RouteEstimate): void {
    const { target } = this;
    if (target === undefined) return;
    target.startFrom(estimate);
    this.credits = Math.max(
      this.credits,
      Math.min(target.value * this.perQuery, this.opts.maxInFlight * this.perQuery),
    );
    const fits = this.fitsTarget();
    if (fits > this.size) {
      this.size = fits;
      this.reach = 2 * this.size;
    }
  }

  /** Positions for the target's reads plus two batches, within the window's maximum. */
  private fitsTarget(): number {
    const reads = (this.target?.value ?? 0) * this.perQuery;
    return Math.min(this.max, reads + 2 * this.opts.batchSize);
  }

  /** Reads in flight allowed now: the measured target, or the fixed allowance. */
  get inFlightLimit(): number {
    return this.target?.value ?? this.opts.maxInFlight;
  }

  /** Positions the window holds now (grown from prefetch x batch size when adaptive). */
  get positions(): number {
    return this.size;
  }

  /** How far above the lowest position not arrived a read may reach: twice the window. */
  get span(): number {
    return this.reach;
  }

  /**
   * True when one more read may be issued: the ramp has a credit left, the reads in flight
   * (`requests`, retries waiting included) are under the limit, and the positions requested or
   * holding data (`occupancy`) are fewer than the window.
   */
  admits(occupancy: number, requests: number): boolean {
    return this.refuses(occupancy, requests) === undefined;
  }

  /** Why one more read may not be issued now (see {@link FetchWindow.admits}), if it may not. */
  refuses(occupancy: number, requests: number): ReadBound | undefined {
    if (occupancy >= this.size) return 'window';
    if (requests >= this.inFlightLimit) {
      return this.inFlightLimit >= this.opts.maxInFlight ? 'ceiling' : 'target';
    }
    if (this.credits < 1) return 'ramp';
    return undefined;
  }

  /** True when a read of `position` stays within the span above `unresolved`. */
  reaches(position: number, unresolved: number): boolean {
    return position < unresolved + this.reach;
  }

  /** Spends one ramp credit on a read just issued. */
  issued(): void {
    this.credits -= 1;
  }

  /**
   * A query issued at `issuedAt` (when {@link FetchWindow.mark} was `mark`) brought its answer
   * at `now` (milliseconds, as `performance.now()`): a measure of the rate and round trip the target is sized from.
   */
  answered(issuedAt: number, mark: number, now: number, route?: string): void {
    this.target?.answered(issuedAt, mark, now, route);
  }

  /** What a read issued now passes to {@link FetchWindow.answered} (see `InFlightTarget.mark`). */
  get mark(): number {
    return this.target?.mark ?? 0;
  }

  /**
   * Counts a first read that brought its answer: it earns the ramp two new reads, never more
   * credit than the in-flight limit, and counts towards the next growth.
   */
  completed(): void {
    this.credits = Math.min(this.credits + RAMP_CREDIT, this.opts.maxInFlight);
    this.completedSinceGrowth++;
  }

  /**
   * With an adaptive window: the trainer is waiting for a batch, none is ready, and healthy
   * reads in flight fill the window (all of it but less than a batch of arrived samples) while
   * the in-flight limit would allow more, so the window (not the database or the trainer) is
   * what holds the stream back: it grows by a batch, up to its maximum, and the span with it.
   * A round trip's worth of reads then fits in it (rate x latency, as a TCP window grows to the
   * bandwidth-delay product). It does not grow while reads wait out a retry (`retrying > 0`:
   * the database is struggling, more reads would not help), nor when arrived samples fill it
   * (in order, behind a straggler), nor once the epoch's last read is issued (`allIssued`), nor
   * more than once per batch of completed reads. It never shrinks within a stream.
   *
   * @returns true when the window grew (more reads may be issued now).
   */
  growIfStarved(
    occupancy: number,
    inFlight: number,
    retrying: number,
    allIssued: boolean,
    /** Queries in flight, when reads are grouped (default: one per position in flight). */
    requests: number = inFlight,
  ): boolean {
    const { batchSize } = this.opts;
    if (this.size >= this.max) return false;
    if (retrying > 0 || allIssued) return false;
    if (occupancy < this.size) return false;
    if (inFlight <= this.size - batchSize) return false;
    if (requests >= this.inFlightLimit) return false;
    // At most once per batch of completed reads: a moment with every read of the window in
    // flight, such as the start of a stream, is not by itself a sign that it is too small.
    if (this.completedSinceGrowth < batchSize) return false;
    this.completedSinceGrowth = 0;
    this.size = Math.min(this.max, this.size + batchSize);
    this.reach = 2 * this.size;
    return true;
  }
}
