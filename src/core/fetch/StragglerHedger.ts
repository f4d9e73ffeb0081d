import type { PathSelector, PathState } from './PathSelector.js';

/** A read older than this many times the fastest route's mean latency gets a second read. */
export const HEDGE_FACTOR = 4;
/** ... but never younger than this (local reads vary by a few milliseconds). */
export const HEDGE_MIN_MS = 20;
/**
 * Live extra reads per stream at most: extra reads younger than {@link HEDGE_MAX_GAP_MS} in
 * flight, so a stream adds at most about this many reads a second to the database's work. An
 * extra read stops counting once it is that old: it is then as stuck as the read it stood in
 * for (a black-holed route, a hung node), costs the database nothing, and must not keep the
 * reads that come after the trouble from being read again.
 */
export const MAX_HEDGES = 8;
/**
 * Extra reads of one stuck read at most: enough to go on once a second past the driver's
 * default request timeout (12 s), after which the read fails and is retried anyway.
 */
export const MAX_HEDGES_PER_READ = 16;
/**
 * Longest gap between two reads of one stuck position: once a fault ends, a position whose
 * reads were all lost in it is read again within this (plus one check), not after the
 * driver's request timeout.
 */
export const HEDGE_MAX_GAP_MS = 1000;
/** How often stuck reads are looked for. */
export const HEDGE_CHECK_MS = 10;

/** A read in flight and the extra reads it got. */
interface TrackedRead {
  /** When the latest read of it (first or extra) was issued. */
  lastAt: number;
  path: PathState;
  hedges: number;
}

/**
 * Decides which stuck reads get another one (DESIGN: a straggler can be re-requested from
 * another replica): a read in flight longer than {@link HEDGE_FACTOR} times the fastest route's
 * mean latency (at least {@link HEDGE_MIN_MS}) is read again over another route when there is
 * one; if that read is stuck too, again after twice the gap, then every
 * {@link HEDGE_MAX_GAP_MS} (at most {@link MAX_HEDGES_PER_READ} extra reads); at most
 * {@link MAX_HEDGES} extra reads younger than {@link HEDGE_MAX_GAP_MS} in flight. Whichever answer comes first is used;
 * dropping the others is the caller's business (the position is resolved).
 *
 * Why more than one: a fault that swallows requests (a route's black hole, a node that hangs)
 * swallows the second reads issued during it as well. With one second read each, and those
 * holding every place until the driver's request timeout, the reads of a 2 s fault stalled
 * their stream 8-15 s; now the first read after the fault is at most a gap away.
 *
 * It issues nothing itself: `reread` does, and calls the `done` it is given when that read
 * ends, whatever its outcome. {@link StragglerHedger.check} is the whole decision, so it can be
 * driven with any clock; {@link StragglerHedger.start} runs it on a timer.
 */
export class StragglerHedger {
  /** Reads in flight by position, oldest latest read first: the candidates for another. */
  private readonly reads = new Map<number, TrackedRead>();
  /** Extra reads in flight and younger than HEDGE_MAX_GAP_MS, by id, oldest first. */
  private readonly live = new Map<number, number>();
  private nextHedge = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly selector: PathSelector,
    private readonly reread: (position: number, path: PathState, done: () => void) => void,
  ) {}

  /** Extra reads in flight that still count against {@link MAX_HEDGES}. */
  get inFlight(): number {
    return this.live.size;
  }

  /** Looks for stuck reads every {@link HEDGE_CHECK_MS}, without keeping the process alive. */
  start(): void {
    this.timer = setInterval(() => this.check(performance.now()), HEDGE_CHECK_MS);
    this.timer.unref();
  }

  /** Stops looking; extra reads in flight finish on their own. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  /** Records a first read of `position` over `path`, issued at `started` (performance.now()). */
  track(position: number, path: PathState, started: number): void {
    // Deleted first so the entry goes to the end: the map must stay in order of the latest
    // read (check() stops at the first young entry), and a key set again keeps its old place.
    this.reads.delete(position);
    this.reads.set(position, { lastAt: started, path, hedges: 0 });
  }

  /** The first read of `position` ended (answered or failed): it is no longer a candidate. */
  settled(position: number): void {
    this.reads.delete(position);
  }

  /** Age past which a read is stuck: HEDGE_FACTOR x the fastest route's mean latency. */
  thresholdMs(): number {
    const fastest = Math.min(...this.selector.states.map((s) => s.latencyMs));
    return Math.max(HEDGE_MIN_MS, HEDGE_FACTOR * fastest);
  }

  /**
   * How long after its latest read a read with `hedges` extra reads gets the next one: the
   * threshold first (however long), then twice the last gap up to {@link HEDGE_MAX_GAP_MS}.
   */
  gapMs(hedges: number): number {
    const threshold = this.thresholdMs();
    return hedges === 0 ? threshold : Math.min(HEDGE_MAX_GAP_MS, threshold * 2 ** hedges);
  }

  /** Issues another read for every stuck read at `now`, within the bounds. */
  check(now: number): void {
    if (this.stopped) return;
    // Extra reads as old as the longest gap are as stuck as what they stood in for.
    for (const [id, started] of this.live) {
      if (now - started < HEDGE_MAX_GAP_MS) break;
      this.live.delete(id);
    }
    if (this.reads.size === 0) return;
    // No read is due sooner after its latest read than this (the first gap is the threshold,
    // later ones at most HEDGE_MAX_GAP_MS).
    const soonest = Math.min(this.thresholdMs(), HEDGE_MAX_GAP_MS);
    const due: number[] = [];
    for (const [position, read] of this.reads) {
      // Ordered by latest read: past the first one younger than that, all are.
      if (now - read.lastAt < soonest) break;
      if (read.hedges >= MAX_HEDGES_PER_READ) continue;
      if (now - read.lastAt < this.gapMs(read.hedges)) continue;
      due.push(position);
    }
    for (const position of due) {
      if (this.live.size >= MAX_HEDGES) return;
      const read = this.reads.get(position)!;
      read.hedges++;
      read.lastAt = now;
      // To the end: the map stays ordered by latest read.
      this.reads.delete(position);
      this.reads.set(position, read);
      const id = this.nextHedge++;
      this.live.set(id, now);
      let ended = false;
      this.reread(position, this.selector.pick(read.path), () => {
        if (ended) return;
        ended = true;
        this.live.delete(id);
      });
    }
  }
}
