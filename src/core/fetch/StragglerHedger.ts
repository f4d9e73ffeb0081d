import type { PathSelector, PathState } from './PathSelector.js';

/** A read older than this many times the fastest route's mean latency gets a second read. */
export const HEDGE_FACTOR = 4;
/** ... but never younger than this (local reads vary by a few milliseconds). */
export const HEDGE_MIN_MS = 20;
/** Second reads in flight per stream at most, so hedging cannot double a loaded database's work. */
export const MAX_HEDGES = 8;
/** How often stuck reads are looked for. */
export const HEDGE_CHECK_MS = 10;

/** A first read in flight. */
interface FirstRead {
  started: number;
  path: PathState;
  hedged: boolean;
}

/**
 * Decides which stuck reads get a second one (DESIGN: a straggler can be re-requested from
 * another replica): a first read in flight longer than {@link HEDGE_FACTOR} times the fastest
 * route's mean latency (at least {@link HEDGE_MIN_MS}) is read again over another route when
 * there is one, once, with at most {@link MAX_HEDGES} second reads in flight. Whichever answer
 * comes first is used; dropping the other is the caller's business (the position is resolved).
 *
 * It issues nothing itself: `reread` does, and reports the end of each second read with
 * {@link StragglerHedger.hedgeEnded}. {@link StragglerHedger.check} is the whole decision, so
 * it can be driven with any clock; {@link StragglerHedger.start} runs it on a timer.
 */
export class StragglerHedger {
  /** First reads in flight by position, oldest first: the candidates for a second read. */
  private readonly firstReads = new Map<number, FirstRead>();
  private hedges = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly selector: PathSelector,
    private readonly reread: (position: number, path: PathState) => void,
  ) {}

  /** Second reads in flight. */
  get inFlight(): number {
    return this.hedges;
  }

  /** Looks for stuck reads every {@link HEDGE_CHECK_MS}, without keeping the process alive. */
  start(): void {
    this.timer = setInterval(() => this.check(performance.now()), HEDGE_CHECK_MS);
    this.timer.unref();
  }

  /** Stops looking; second reads in flight finish on their own. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Records a first read of `position` over `path`, issued at `started` (performance.now()). */
  track(position: number, path: PathState, started: number): void {
    // Deleted first so the entry goes to the end: the map must stay in age order (check()
    // stops at the first young entry), and a key set again keeps its old place.
    this.firstReads.delete(position);
    this.firstReads.set(position, { started, path, hedged: false });
  }

  /** The first read of `position` ended (answered or failed): it is no longer a candidate. */
  settled(position: number): void {
    this.firstReads.delete(position);
  }

  /** A second read ended, whatever its outcome: it frees a place for another. */
  hedgeEnded(): void {
    this.hedges--;
  }

  /** Age past which a first read is stuck: HEDGE_FACTOR x the fastest route's mean latency. */
  thresholdMs(): number {
    const fastest = Math.min(...this.selector.states.map((s) => s.latencyMs));
    return Math.max(HEDGE_MIN_MS, HEDGE_FACTOR * fastest);
  }

  /** Issues a second read for every stuck first read at `now`, within the bound. */
  check(now: number): void {
    if (this.stopped || this.firstReads.size === 0) return;
    const after = this.thresholdMs();
    for (const [position, first] of this.firstReads) {
      if (this.hedges >= MAX_HEDGES) return;
      if (now - first.started < after) return; // oldest first: the rest are younger
      if (first.hedged) continue;
      first.hedged = true;
      this.hedges++;
      this.reread(position, this.selector.pick(first.path));
    }
  }
}
