/**
 * Headroom over rate x round trip: reads in flight are sized to twice what Little's law says
 * the measured rate needs. Twice lets a stream whose reads in flight are what limit it double
 * them every round trip (its rate doubles with them until something else binds), and absorbs
 * answers that arrive in bursts, as a TCP sender keeps twice the bandwidth-delay product.
 */
export const TARGET_HEADROOM = 2;
/** Rates are kept for this many measuring intervals (about round trips); the target uses their highest. */
export const RATE_INTERVALS = 8;
/** A measuring interval lasts one smoothed round trip, and never less than this. */
export const MIN_INTERVAL_MS = 20;
/** The round trip's floor is the lowest one measured over the last two periods of this length. */
export const MIN_RTT_PERIOD_MS = 5_000;
/**
 * A round trip counts in the smoothed one as at most this many times it (plus an interval): a
 * hung node's read (12 s until the driver's timeout) moves it by a seventh, not by 1.5 s, and
 * a route that did get slower is followed within a few dozen answers.
 */
const SRTT_CLAMP = 2;
/** Gain of the smoothed round trip (TCP's SRTT). */
const RTT_GAIN = 1 / 8;

/**
 * What a stream measured of its route: its rate (answers per millisecond) and its lowest
 * round trip (ms). The next stream on the same route starts from it (see
 * {@link InFlightTarget.startFrom}).
 */
export interface RouteEstimate {
  rate: number;
  minRttMs: number;
  /** Each database path's mean read latency, in the paths' order (see `PathSelector`). */
  pathLatencyMs?: readonly number[];
}

/**
 * How many reads a stream should keep in flight, sized from what it measures (Little's law):
 * `TARGET_HEADROOM x rate x round trip`, between a floor and a ceiling.
 *
 * - The **rate** is measured at every answer, over the read's own round trip: the answers
 *   the stream had while that read was out, per millisecond (a delivery rate, as BBR measures
 *   a TCP flow's: answers arriving in bursts do not split it). The target uses the highest of
 *   the last {@link RATE_INTERVALS} intervals of about a round trip each: a trainer that
 *   pauses for a moment does not shrink it; one that slows for good lets it fall within eight
 *   round trips.
 * - The **round trip** is the lowest measured over the last 5-10 s: the time the route itself
 *   takes, not the queueing that extra reads add. With several routes, each route's lowest
 *   counts by its share of the answers: a fast route answering now and then does not size the
 *   reads of a slow one. Sized by the mean instead, reads that queue
 *   (in the database, or behind a busy event loop) would raise the round trip, and so the
 *   target, and so the queueing: reads in flight would grow to the ceiling whenever a core is
 *   the limit. With the lowest, a CPU-bound stream's target stays at twice what its rate needs.
 *
 * While the reads in flight are what limit the rate, each interval measures the rate they
 * allow at the round trip, and the target doubles: a stream reaches a far database's rate in
 * a few round trips (about 7 from 32 reads to 4,096), as TCP's slow start does, and stays
 * there once the database, the CPU or the trainer binds.
 *
 * Pure bookkeeping on timestamps the caller passes: nothing here reads a clock or waits.
 */
export class InFlightTarget {
  private current: number;
  private srttMs: number | undefined;
  /** Each route's lowest round trip and answers, this period and the one before. */
  private readonly routes = new Map<string, RouteTimes>();
  /** The routes' lowest round trips weighted by their answers (Infinity: none yet). */
  private floorRttMs = Infinity;
  private periodStart: number;
  /** Answers so far. */
  private delivered = 0;
  /** The highest rate measured since the interval began, and when it began. */
  private intervalRate = 0;
  private intervalStart: number;
  /** Answers per millisecond of the last intervals, a ring. */
  private readonly rates: number[] = [];
  private nextRate = 0;
  /** The highest of {@link InFlightTarget.rates}. */
  private ratesMax = 0;
  /**
   * A rate another stream on the route measured (see {@link InFlightTarget.startFrom}): it
   * sizes the target for {@link InFlightTarget.inheritedIntervals} more intervals, and is never
   * reported as this stream's own.
   */
  private inheritedRate = 0;
  private inheritedIntervals = 0;

  constructor(
    private readonly floor: number,
    private readonly ceiling: number,
    now: number,
  ) {
    this.current = Math.min(floor, ceiling);
    this.intervalStart = now;
    this.periodStart = now;
  }

  /** Reads in flight the stream should keep now. */
  get value(): number {
    return this.current;
  }

  /**
   * The lowest round trip measured lately, in milliseconds, each route's weighted by its share
   * of the answers (undefined before any answer).
   */
  get minRoundTripMs(): number | undefined {
    return Number.isFinite(this.floorRttMs) ? this.floorRttMs : undefined;
  }

  /** The smoothed round trip, in milliseconds (undefined before any answer). */
  get smoothedRoundTripMs(): number | undefined {
    return this.srttMs;
  }

  /**
   * The rate (the highest of the last intervals and the one under way) and the lowest round
   * trip this stream measured lately, for a later stream on the same route (undefined before
   * any answer). A rate it started from is not in it: an estimate handed from stream to stream
   * would otherwise outlive the minute it is kept for.
   */
  get estimate(): RouteEstimate | undefined {
    const minRttMs = this.minRoundTripMs;
    const rate = Math.max(this.ratesMax, this.intervalRate);
    return minRttMs === undefined || rate <= 0 ? undefined : { rate, minRttMs };
  }

  /**
   * Starts from what an earlier stream on the same route measured, as TCP shares a route's
   * round trip and window between connections to one host (RFC 2140): the target is
   * `TARGET_HEADROOM x rate x round trip` of `estimate` at once, not the floor. Its rate sizes
   * the target for {@link RATE_INTERVALS} measuring intervals (about round trips), beside this
   * stream's own, then drops out; its round trip counts only until this stream's first answer.
   * Without it, a stream at 150 ms needs two or three round trips of doubling from its floor.
   * Ignored once an answer has come.
   */
  startFrom(estimate: RouteEstimate): void {
    if (this.delivered > 0 || !(estimate.rate > 0) || !(estimate.minRttMs >= 0)) return;
    this.inheritedRate = estimate.rate;
    this.inheritedIntervals = RATE_INTERVALS;
    this.current = this.sized(estimate.rate, estimate.minRttMs);
  }

  /** Answers so far: what a read issued now passes to {@link InFlightTarget.answered}. */
  get mark(): number {
    return this.delivered;
  }

  /**
   * A read (one query) issued at `issuedAt`, when {@link InFlightTarget.mark} was `mark`, was
   * answered at `now` (milliseconds) over `route`.
   */
  answered(issuedAt: number, mark: number, now: number, route = ''): void {
    const rtt = Math.max(0, now - issuedAt);
    this.delivered++;
    this.intervalRate = Math.max(this.intervalRate, (this.delivered - mark) / Math.max(rtt, 0.01));
    // A read held by a hung node until the driver's timeout moves it by one clamped sample.
    if (this.srttMs === undefined) this.srttMs = rtt;
    else {
      const sample = Math.min(rtt, SRTT_CLAMP * this.srttMs + MIN_INTERVAL_MS);
      this.srttMs += RTT_GAIN * (sample - this.srttMs);
    }
    const sincePeriod = now - this.periodStart;
    if (sincePeriod >= MIN_RTT_PERIOD_MS) {
      // After a pause of two periods or more, the previous period's figures are stale too.
      const stale = sincePeriod >= 2 * MIN_RTT_PERIOD_MS;
      for (const r of this.routes.values()) {
        r.minBefore = stale ? Infinity : r.minNow;
        r.answersBefore = stale ? 0 : r.answersNow;
        r.minNow = Infinity;
        r.answersNow = 0;
      }
      this.periodStart = now;
    }
    let times = this.routes.get(route);
    if (times === undefined) {
      times = { minNow: Infinity, minBefore: Infinity, answersNow: 0, answersBefore: 0 };
      this.routes.set(route, times);
    }
    times.minNow = Math.min(times.minNow, rtt);
    times.answersNow++;
    this.floorRttMs = weightedFloor(this.routes);
    // The interval under way counts at once: a target raised only when it ends would lag a
    // round trip behind, and reads would double every second round trip.
    const rate = Math.max(this.ratesMax, this.intervalRate, this.inheritedRate);
    this.current = this.sized(rate, this.minRoundTripMs!);
    if (now - this.intervalStart < Math.max(MIN_INTERVAL_MS, this.srttMs)) return;
    this.rates[this.nextRate] = this.intervalRate;
    this.nextRate = (this.nextRate + 1) % RATE_INTERVALS;
    this.ratesMax = Math.max(...this.rates);
    if (this.inheritedIntervals > 0 && --this.inheritedIntervals === 0) {
      // The started rate is gone: the target is this stream's own from this answer on.
      this.inheritedRate = 0;
      this.current = this.sized(this.ratesMax, this.minRoundTripMs!);
    }
    this.intervalRate = 0;
    this.intervalStart = now;
  }

  /** `TARGET_HEADROOM x rate x round trip`, between the floor and the ceiling. */
  private sized(rate: number, rttMs: number): number {
    return Math.min(this.ceiling, Math.max(this.floor, Math.ceil(TARGET_HEADROOM * rate * rttMs)));
  }
}

/** One route's lowest round trip and answers, this period and the one before. */
interface RouteTimes {
  minNow: number;
  minBefore: number;
  answersNow: number;
  answersBefore: number;
}

/** The routes' lowest round trips, weighted by their answers of both periods. */
function weightedFloor(routes: ReadonlyMap<string, RouteTimes>): number {
  let sum = 0;
  let answers = 0;
  for (const r of routes.values()) {
    const n = r.answersNow + r.answersBefore;
    const min = Math.min(r.minNow, r.minBefore);
    if (n === 0 || !Number.isFinite(min)) continue;
    sum += n * min;
    answers += n;
  }
  return answers > 0 ? sum / answers : Infinity;
}
