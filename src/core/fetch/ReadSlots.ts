import type { ReadBound } from './FetchWindow.js';
import type { RouteEstimate } from './InFlightTarget.js';

/**
 * How long what a stream measured of its route (rate and round trip) is kept after it ends,
 * for the next stream on the route to start from: a trainer's next epoch, a reconnect, a
 * DataLoader worker. A minute covers the pause between epochs and an evaluation pass; an
 * estimate older than that may describe another load.
 */
export const ROUTE_MEMORY_MS = 60_000;

/**
 * Queries a stream may have in flight whatever the process's cap says: enough that a stream
 * refused by the cap still has answers coming to wake it and keeps moving, few enough that
 * many streams cannot get around the cap with them.
 */
export const READS_PAST_THE_CAP = 16;

/** The gauges a process's reads are shown on (see `loaderMetrics`). */
export interface ReadSlotsGauges {
  /** Streams by what last stopped their reads. */
  streamReadBound: { inc(labels: { bound: ReadBound }, value?: number): void };
  /** The streams' targets of reads in flight, summed. */
  readsInFlightTarget: { inc(value: number): void };
  /** The mean over streams of the lowest round trip each measured lately, in seconds. */
  readRoundTripMinSeconds: { set(value: number): void };
}

/**
 * The process-wide cap on database queries in flight, shared by its streams, and what the
 * streams tell the operator about their reads. Each stream sizes its own reads in flight by
 * its rate and round trip (see `InFlightTarget`); the cap keeps many streams sized for a far
 * database from taking more requests than the driver's connections carry (the driver refuses
 * a request once every connection to a host has `maxRequestsPerConnection` in flight).
 *
 * A stream with fewer than {@link READS_PAST_THE_CAP} queries going is admitted whatever the
 * cap (see {@link StreamReads.admits}), as the held-bytes budget always admits a batch: a
 * stream refused by the cap while it had nothing in flight would never be woken. So the process
 * may pass the cap by at most that many queries per stream.
 */
export class ReadSlots {
  private usedNow = 0;
  private streams = 0;
  private minRttSumMs = 0;
  private minRttStreams = 0;
  /** Per route, the highest-rate estimate of the streams that ended in the last minute. */
  private readonly remembered = new Map<string, { estimate: RouteEstimate; at: number }>();
  /** Streams reading now. */
  private readonly live = new Set<StreamReads>();

  /**
   * @param limit Queries all streams of the process may have in flight together.
   * @param gauges Where streams' bounds, targets and round trips are shown.
   */
  constructor(
    readonly limit: number,
    private readonly gauges?: ReadSlotsGauges,
  ) {}

  /** Queries in flight now, every stream's together. */
  get used(): number {
    return this.usedNow;
  }

  /** Streams reading now. */
  get streamCount(): number {
    return this.streams;
  }

  /**
   * A stream starts reading: its share of the cap, and its figures on the gauges. With a
   * `route` (what it reads and over which paths), what it `measured` is kept when it ends, and
   * given to later streams on that route by {@link ReadSlots.recall}.
   */
  join(route?: string, measured?: () => RouteEstimate | undefined): StreamReads {
    this.streams++;
    const reads = new StreamReads(this, route, measured);
    this.live.add(reads);
    return reads;
  }

  /**
   * What streams on `route` measured, for a new one to start from: the highest rate among
   * those reading now and the one kept from those that ended within {@link ROUTE_MEMORY_MS}
   * of `now` (ms, as `performance.now()`). Undefined when none measured anything.
   */
  recall(route: string, now: number): RouteEstimate | undefined {
    let best: RouteEstimate | undefined;
    const kept = this.remembered.get(route);
    if (kept !== undefined) {
      if (now - kept.at <= ROUTE_MEMORY_MS) best = kept.estimate;
      else this.remembered.delete(route);
    }
    for (const reads of this.live) {
      if (reads.route !== route) continue;
      const estimate = reads.measured();
      if (estimate !== undefined && (best === undefined || estimate.rate > best.rate)) {
        best = estimate;
      }
    }
    return best;
  }

  /**
   * @internal A stream on `route` ended at `now` having measured `estimate`. The highest rate
   * of the last minute is kept: a slow stream (a paced trainer, an epoch's tail) ending after a
   * fast one does not shrink the next one's start; the next stream measures its own within
   * eight round trips either way.
   */
  remember(route: string, estimate: RouteEstimate, now: number): void {
    for (const [key, kept] of this.remembered) {
      if (now - kept.at > ROUTE_MEMORY_MS) this.remembered.delete(key);
    }
    const kept = this.remembered.get(route);
    if (kept === undefined || estimate.rate >= kept.estimate.rate) {
      this.remembered.set(route, { estimate, at: now });
    }
  }

  /** @internal Counts `delta` more queries in flight. */
  addUsed(delta: number): void {
    this.usedNow = Math.max(0, this.usedNow + delta);
  }

  /** @internal A stream's bound changed from `before` to `after`. */
  moveBound(before: ReadBound | undefined, after: ReadBound | undefined): void {
    if (!this.gauges) return;
    if (before !== undefined) this.gauges.streamReadBound.inc({ bound: before }, -1);
    if (after !== undefined) this.gauges.streamReadBound.inc({ bound: after }, 1);
  }

  /** @internal A stream's target changed by `delta`. */
  addTarget(delta: number): void {
    this.gauges?.readsInFlightTarget.inc(delta);
  }

  /** @internal A stream's lowest round trip changed from `before` to `after` (ms). */
  moveMinRtt(before: number | undefined, after: number | undefined): void {
    if (before !== undefined) {
      this.minRttSumMs -= before;
      this.minRttStreams--;
    }
    if (after !== undefined) {
      this.minRttSumMs += after;
      this.minRttStreams++;
    }
    const mean = this.minRttStreams > 0 ? this.minRttSumMs / this.minRttStreams / 1000 : 0;
    this.gauges?.readRoundTripMinSeconds.set(Math.max(0, mean));
  }

  /** @internal A stream stopped reading. */
  left(reads: StreamReads): void {
    this.streams--;
    this.live.delete(reads);
  }
}

/** One stream's share of its process's {@link ReadSlots}. */
export class StreamReads {
  private queries = 0;
  private bound: ReadBound | undefined;
  private target = 0;
  private minRttMs: number | undefined;
  private closed = false;

  constructor(
    private readonly slots: ReadSlots,
    /** What the stream reads and over which paths (absent: nothing is kept of it). */
    readonly route?: string,
    private readonly measuredNow?: () => RouteEstimate | undefined,
  ) {}

  /** The rate and round trip this stream has measured so far. */
  measured(): RouteEstimate | undefined {
    return this.closed ? undefined : this.measuredNow?.();
  }

  /**
   * True when `more` queries beyond this stream's `queries` in flight (as last told) may start:
   * under the process's cap, or within {@link READS_PAST_THE_CAP} for this stream whatever the
   * cap.
   */
  admits(more: number): boolean {
    if (this.queries + more <= READS_PAST_THE_CAP) return true;
    return this.slots.used + more <= this.slots.limit;
  }

  /** This stream's queries in flight now (waiting retries included). */
  setQueries(queries: number): void {
    if (this.closed) return;
    this.slots.addUsed(queries - this.queries);
    this.queries = queries;
  }

  /** What stopped this stream's reads the last time it issued them. */
  setBound(bound: ReadBound | undefined): void {
    if (this.closed || bound === this.bound) return;
    this.slots.moveBound(this.bound, bound);
    this.bound = bound;
  }

  /** This stream's target of reads in flight and the lowest round trip it measured lately. */
  setTarget(target: number, minRttMs: number | undefined): void {
    if (this.closed) return;
    if (target !== this.target) {
      this.slots.addTarget(target - this.target);
      this.target = target;
    }
    if (minRttMs !== this.minRttMs) {
      this.slots.moveMinRtt(this.minRttMs, minRttMs);
      this.minRttMs = minRttMs;
    }
  }

  /**
   * The stream ended (at `now`, ms as `performance.now()`): everything it counted is given
   * back, and what it measured of its route is kept for the next stream on it.
   */
  leave(now: number = performance.now()): void {
    if (this.closed) return;
    const estimate = this.measured();
    if (this.route !== undefined && estimate !== undefined) {
      this.slots.remember(this.route, estimate, now);
    }
    this.setQueries(0);
    this.setBound(undefined);
    this.setTarget(0, undefined);
    this.closed = true;
    this.slots.left(this);
  }
}
