import cassandra from 'cassandra-driver';
import { LoaderError, unavailable } from '../errors/LoaderError.js';
import type { LoaderMetrics } from '../metrics/loaderMetrics.js';
import type { ResumeState } from '../resume/resumeToken.js';
import type { EpochShard } from '../sampling/epochShard.js';
import type { DbPath } from '../db/DbPath.js';
import type { StreamLimits } from '../config/streamLimits.js';
import { DeliveryTracker } from './DeliveryTracker.js';
import { retryableDriverError as isRetryable } from '../db/retryableDriverError.js';
import { PathSelector, type PathState } from './PathSelector.js';

/** One sample read from the database. */
export interface FetchedSample {
  /** Position in the rank's epoch. */
  position: number;
  /** 16 UUID bytes (a view into the split's ids). */
  id: Buffer;
  /** -1 when the sample has no integer label. */
  label: number;
  labelBlob: Buffer | null;
  data: Buffer;
}

/** A batch ready to be sent, with the state a resume token must carry after it. */
export interface AssembledBatch {
  epoch: number;
  index: number;
  samples: FetchedSample[];
  skippedMissing: number;
  lastInEpoch: boolean;
  /** Where a stream resumed right after this batch continues. */
  resume: ResumeState;
  /** When the oldest sample of the batch arrived (performance.now()). */
  firstArrivalAt: number;
}

/** What the engine needs to fetch a rank's epochs. */
export interface FetchOptions {
  keyspace: string;
  /** The split's ids, 16 bytes each, in stored order. */
  ids: Buffer;
  firstEpoch: number;
  /** One past the last epoch to stream. */
  endEpoch: number;
  /** The rank's positions in an epoch. */
  shardOf: (epoch: number) => EpochShard;
  batchSize: number;
  /** Batches worth of positions held in flight or waiting to be sent. */
  prefetch: number;
  /**
   * Positions the window may grow to while the stream starves (absent: fixed at prefetch x
   * batch size). See {@link adaptiveWindowMax}.
   */
  adaptiveWindowMax?: number;
  ordering: 'out-of-order' | 'in-order';
  missing: 'fail' | 'skip';
  maxInFlight: number;
  readAttempts: number;
  retryBaseMs: number;
  resume?: ResumeState;
  paths: readonly DbPath[];
  metrics: LoaderMetrics;
  signal: AbortSignal;
}

interface Pending {
  position: number;
  attempt: number;
  path?: PathState;
}

/** A read older than this many times the fastest route's mean latency gets a second read. */
const HEDGE_FACTOR = 4;
/** ... but never younger than this (local reads vary by a few milliseconds). */
const HEDGE_MIN_MS = 20;
/** Second reads in flight per stream at most, so hedging cannot double a loaded database's work. */
const MAX_HEDGES = 8;
/** How often stuck reads are looked for. */
const HEDGE_CHECK_MS = 10;

/**
 * How far an adaptive window may grow: enough positions for the stream's full in-flight
 * allowance plus two batches arriving or waiting to be sent (so that at a long round trip the
 * in-flight limit, not the window, bounds the reads), within the server's largest prefetch and
 * the per-stream window limit.
 */
export function adaptiveWindowMax(
  batchSize: number,
  limits: Pick<StreamLimits, 'maxPrefetch' | 'maxWindowSamples' | 'maxInFlightPerStream'>,
): number {
  return Math.min(
    limits.maxPrefetch * batchSize,
    limits.maxWindowSamples,
    limits.maxInFlightPerStream + 2 * batchSize,
  );
}

/** Requests issued for every one completed while the window fills: five for four. */
const RAMP_CREDIT = 1.25;
const RAMP_START = 32;

/**
 * The fetch engine of one stream. It keeps up to `prefetch x batchSize` positions of the
 * rank's epoch requested or waiting, reads each sample with a single-partition query over the
 * route expected to answer first, and replaces every completed read at once (after a start
 * that ramps up instead of bursting). In out-of-order mode a batch is whichever `batchSize`
 * samples arrived first; in in-order mode it is the next `batchSize` positions in order.
 *
 * Requests never reach further than a bounded span (twice the window) above the lowest
 * position that has not arrived: a stuck read is retried, not overtaken without limit, and an
 * arrived sample leaves in the next batch (lowest positions first), so delivered positions
 * never spread more than about two spans above the lowest undelivered one and the resume
 * token stays small whatever the dataset's size. Reads
 * that fail retryably are retried with exponential backoff on another route when there is one;
 * after `readAttempts` the stream fails with UNAVAILABLE. A cancelled stream issues no further
 * reads (the ones in flight finish and are dropped).
 */
export class BatchFetcher {
  private readonly selector: PathSelector;
  private readonly query: string;
  private window: number;
  private span: number;
  private readonly maxWindow: number;
  private readonly timers = new Set<NodeJS.Timeout>();
  private failure: unknown;
  private wake: (() => void) | undefined;
  private credits = RAMP_START;
  private closed = false;
  /** First reads in flight by position, oldest first: the candidates for a second read. */
  private readonly outstanding = new Map<
    number,
    { started: number; path: PathState; hedged: boolean }
  >();
  private hedges = 0;
  /** Reads completed since the adaptive window last grew. */
  private completedSinceGrowth = 0;
  private readonly hedgeTimer: NodeJS.Timeout;

  // Per-epoch state.
  private epoch = 0;
  private plan!: EpochShard;
  private tracker!: DeliveryTracker;
  private issueCursor = 0;
  /** Lowest position neither delivered nor arrived: the span of requests is measured from it. */
  private unresolved = 0;
  private nextBatchIndex = 0;
  private inFlight = 0;
  private retrying = 0;
  private arrived: FetchedSample[] = [];
  private arrivedByPosition = new Map<number, FetchedSample>();
  private skipped = new Set<number>();
  private arrivalTimes = new Map<number, number>();

  constructor(private readonly opts: FetchOptions) {
    this.selector = new PathSelector(opts.paths);
    this.query = `SELECT label, label_blob, data FROM ${opts.keyspace}.samples WHERE id = ?`;
    this.window = Math.max(1, opts.prefetch * opts.batchSize);
    this.span = 2 * this.window;
    this.maxWindow = Math.max(this.window, opts.adaptiveWindowMax ?? 0);
    this.credits = Math.min(RAMP_START, opts.maxInFlight);
    opts.signal.addEventListener('abort', () => this.notify(), { once: true });
    this.hedgeTimer = setInterval(() => this.hedgeStragglers(), HEDGE_CHECK_MS);
    this.hedgeTimer.unref();
  }

  /** Positions the window holds now (grown from prefetch x batch size when adaptive). */
  get windowPositions(): number {
    return this.window;
  }

  /** Yields the rank's batches, epoch after epoch, starting where `resume` says. */
  async *batches(): AsyncGenerator<AssembledBatch> {
    try {
      const start = this.opts.resume?.epoch ?? this.opts.firstEpoch;
      for (let epoch = start; epoch < this.opts.endEpoch; epoch++) {
        this.startEpoch(epoch, epoch === start ? this.opts.resume : undefined);
        while (this.tracker.count < this.plan.length) {
          this.check();
          const batch = this.assemble();
          if (batch) {
            yield batch;
            continue;
          }
          this.pump();
          if (this.growWindowIfStarved()) this.pump();
          await new Promise<void>((resolve) => (this.wake = resolve));
          this.wake = undefined;
        }
      }
    } finally {
      this.close();
    }
  }

  /** Stops issuing reads and clears retry timers. */
  close(): void {
    this.closed = true;
    clearInterval(this.hedgeTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.opts.metrics.dbRequestsInFlight.dec(this.retrying);
    this.retrying = 0;
  }

  private startEpoch(epoch: number, resume: ResumeState | undefined): void {
    this.epoch = epoch;
    this.plan = this.opts.shardOf(epoch);
    this.tracker = new DeliveryTracker(resume);
    this.issueCursor = this.tracker.low;
    this.unresolved = this.tracker.low;
    this.nextBatchIndex = resume?.nextBatchIndex ?? 0;
    this.arrived = [];
    this.arrivedByPosition.clear();
    this.skipped.clear();
    this.arrivalTimes.clear();
  }

  private check(): void {
    if (this.failure !== undefined) throw this.failure;
    this.opts.signal.throwIfAborted();
  }

  private notify(): void {
    this.wake?.();
  }

  /**
   * Positions requested or holding data until sent. Skipped (missing) positions hold nothing
   * and do not fill a batch, so they are left out: counting them could fill the window with
   * positions no batch will take, and the stream would stall.
   */
  private get occupancy(): number {
    return this.inFlight + this.retrying + this.arrivalTimes.size - this.skipped.size;
  }

  /**
   * With an adaptive window: the trainer is waiting for a batch, none is ready, and healthy
   * reads in flight fill the window (all of it but less than a batch of arrived samples) while
   * the in-flight limit would allow more, so the window (not the database or the trainer) is
   * what holds the stream back: it grows by a batch, up to its maximum. A round trip's worth
   * of reads then fits in it (rate x latency, as a TCP window grows to the bandwidth-delay
   * product). It does not grow while reads wait out a retry (the database is struggling: more
   * reads would not help), nor when arrived samples fill it (in order, behind a straggler),
   * nor once the epoch's last read is issued, nor more than once per batch of completed
   * reads. It never shrinks within a stream.
   */
  private growWindowIfStarved(): boolean {
    if (this.window >= this.maxWindow || this.closed) return false;
    if (this.retrying > 0 || this.issueCursor >= this.plan.length) return false;
    if (this.occupancy < this.window) return false;
    if (this.inFlight <= this.window - this.opts.batchSize) return false;
    if (this.inFlight >= this.opts.maxInFlight) return false;
    // At most once per batch of completed reads: a moment with every read of the window in
    // flight, such as the start of a stream, is not by itself a sign that it is too small.
    if (this.completedSinceGrowth < this.opts.batchSize) return false;
    this.completedSinceGrowth = 0;
    this.window = Math.min(this.maxWindow, this.window + this.opts.batchSize);
    this.span = 2 * this.window;
    return true;
  }

  /** Issues reads while the window, the span, the in-flight limit and the ramp allow. */
  private pump(): void {
    const { maxInFlight } = this.opts;
    while (
      !this.closed &&
      this.credits >= 1 &&
      this.inFlight + this.retrying < maxInFlight &&
      this.occupancy < this.window
    ) {
      while (this.issueCursor < this.plan.length && this.tracker.isDelivered(this.issueCursor)) {
        this.issueCursor++;
      }
      if (this.issueCursor >= this.plan.length) return;
      while (
        this.unresolved < this.issueCursor &&
        (this.tracker.isDelivered(this.unresolved) || this.arrivalTimes.has(this.unresolved))
      ) {
        this.unresolved++;
      }
      if (this.issueCursor >= this.unresolved + this.span) return;
      this.credits -= 1;
      this.read({ position: this.issueCursor++, attempt: 1 });
    }
  }

  private read(pending: Pending): void {
    const path = this.selector.pick(pending.path);
    const position = pending.position;
    const epoch = this.epoch;
    const started = performance.now();
    this.inFlight++;
    this.outstanding.set(position, { started, path, hedged: false });
    this.execute(position, path).then(
      ({ id, row }) => {
        this.inFlight--;
        this.outstanding.delete(position);
        if (this.closed || epoch !== this.epoch) return;
        this.credits = Math.min(this.credits + RAMP_CREDIT, this.opts.maxInFlight);
        this.completedSinceGrowth++;
        this.onRow(position, id, row);
      },
      (err: unknown) => {
        this.inFlight--;
        this.outstanding.delete(position);
        if (this.closed || epoch !== this.epoch || this.isResolved(position)) return;
        this.onError({ ...pending, path }, err);
      },
    );
  }

  /**
   * Reads a stuck sample a second time, over another route when there is one (DESIGN: a
   * straggler can be re-requested from another replica): whichever answer comes first is
   * used, the other dropped. Bounded per stream, and only for reads far slower than usual.
   */
  private hedgeStragglers(): void {
    if (this.closed || this.outstanding.size === 0) return;
    const fastest = Math.min(...this.selector.states.map((s) => s.latencyMs));
    const after = Math.max(HEDGE_MIN_MS, HEDGE_FACTOR * fastest);
    const now = performance.now();
    const epoch = this.epoch;
    for (const [position, first] of this.outstanding) {
      if (this.hedges >= MAX_HEDGES) return;
      if (now - first.started < after) return; // oldest first: the rest are younger
      if (first.hedged) continue;
      first.hedged = true;
      this.hedges++;
      const path = this.selector.pick(first.path);
      this.opts.metrics.dbHedgedReads.inc({ path: path.path.name });
      this.execute(position, path).then(
        ({ id, row }) => {
          this.hedges--;
          if (this.closed || epoch !== this.epoch) return;
          this.onRow(position, id, row);
        },
        () => {
          this.hedges--; // the first read carries on, with its own retries
        },
      );
    }
  }

  /** One read of a sample's row over a route, with the route's and the metrics' accounting. */
  private async execute(
    position: number,
    path: PathState,
  ): Promise<{ id: Buffer; row: cassandra.types.Row | null }> {
    const stored = this.plan.storedPosition(position);
    const id = this.opts.ids.subarray(stored * 16, stored * 16 + 16);
    const started = performance.now();
    path.inFlight++;
    this.opts.metrics.dbRequestsInFlight.inc();
    try {
      const rs = await path.path.client.execute(this.query, [new cassandra.types.Uuid(id)], {
        prepare: true,
        isIdempotent: true,
        consistency: cassandra.types.consistencies.localOne,
      });
      const ms = performance.now() - started;
      this.selector.observe(path, ms);
      this.opts.metrics.dbReadSeconds.observe({ path: path.path.name }, ms / 1000);
      return { id, row: rs.first() };
    } catch (err) {
      this.selector.penalize(path);
      throw err;
    } finally {
      path.inFlight--;
      this.opts.metrics.dbRequestsInFlight.dec();
    }
  }

  /** True once a position arrived, was skipped, or was delivered (a second answer is dropped). */
  private isResolved(position: number): boolean {
    return this.arrivalTimes.has(position) || this.tracker.isDelivered(position);
  }

  private onRow(position: number, id: Buffer, row: cassandra.types.Row | null): void {
    if (this.isResolved(position)) {
      // The other read of a hedged pair came first; this one only freed a place.
      this.pump();
      this.notify();
      return;
    }
    const now = performance.now();
    if (!row) {
      if (this.opts.missing === 'fail') {
        this.failure = new LoaderError(
          'DATA_LOSS',
          `sample ${new cassandra.types.Uuid(id).toString()} of the split has no row in ` +
            `${this.opts.keyspace}.samples; re-run the ingest, or ask for ` +
            'missing_sample_policy SKIP to leave such samples out',
        );
      } else {
        this.opts.metrics.missingSamples.inc();
        this.skipped.add(position);
        this.arrivalTimes.set(position, now);
      }
    } else {
      const sample: FetchedSample = {
        position,
        id,
        label: (row['label'] as number | null) ?? -1,
        labelBlob: (row['label_blob'] as Buffer | null) ?? null,
        data: row['data'] as Buffer,
      };
      this.arrivalTimes.set(position, now);
      if (this.opts.ordering === 'in-order') this.arrivedByPosition.set(position, sample);
      else this.arrived.push(sample);
    }
    this.pump();
    this.notify();
  }

  private onError(pending: Required<Pending>, err: unknown): void {
    if (!isRetryable(err)) {
      this.failure ??= err; // not the database's passing trouble: reported as it is (INTERNAL)
      this.notify();
      return;
    }
    if (pending.attempt >= this.opts.readAttempts) {
      this.failure ??= unavailable(
        `reading from the database failed after ${pending.attempt} attempt(s): ` +
          `${(err as Error)?.message ?? String(err)}; resume with the last resume token`,
        err,
      );
      this.notify();
      return;
    }
    this.opts.metrics.dbRetries.inc({ path: pending.path.path.name });
    const backoff = this.opts.retryBaseMs * 2 ** (pending.attempt - 1) * (0.5 + Math.random());
    this.retrying++;
    this.opts.metrics.dbRequestsInFlight.inc();
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.retrying--;
      this.opts.metrics.dbRequestsInFlight.dec();
      if (!this.closed) this.read({ ...pending, attempt: pending.attempt + 1 });
    }, backoff);
    this.timers.add(timer);
  }

  /** Takes the next batch if one is ready. */
  private assemble(): AssembledBatch | undefined {
    const { batchSize } = this.opts;
    const resolved = this.tracker.count + this.arrivalTimes.size;
    const epochResolved = resolved === this.plan.length;
    let taken: FetchedSample[];
    let skippedNow: number[];
    if (this.opts.ordering === 'out-of-order') {
      if (this.arrived.length < batchSize && !epochResolved) return undefined;
      // Lowest positions first: an arrived straggler leaves in the very next batch, which
      // keeps the delivered positions above the lowest undelivered one (the token) bounded.
      this.arrived.sort((a, b) => a.position - b.position);
      taken = this.arrived.splice(0, batchSize);
      skippedNow = [...this.skipped];
    } else {
      taken = [];
      skippedNow = [];
      let p = this.tracker.low;
      while (taken.length < batchSize && p < this.plan.length) {
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
    for (const p of skippedNow) {
      firstArrivalAt = Math.min(firstArrivalAt, this.arrivalTimes.get(p)!);
      this.skipped.delete(p);
      this.arrivalTimes.delete(p);
      this.tracker.markDelivered(p);
    }
    const lastInEpoch = this.tracker.count === this.plan.length;
    const index = this.nextBatchIndex++;
    const resume: ResumeState = lastInEpoch
      ? { epoch: this.epoch + 1, low: 0, deliveredAbove: [], nextBatchIndex: 0 }
      : {
          epoch: this.epoch,
          low: this.tracker.low,
          deliveredAbove: this.tracker.deliveredAbove(),
          nextBatchIndex: this.nextBatchIndex,
        };
    this.pump();
    return {
      epoch: this.epoch,
      index,
      samples: taken,
      skippedMissing: skippedNow.length,
      lastInEpoch,
      resume,
      firstArrivalAt,
    };
  }
}
