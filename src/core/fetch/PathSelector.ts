import type { DbPath } from '../db/DbPath.js';

/** A route's live figures. @internal */
export interface PathState {
  path: DbPath;
  inFlight: number;
  /** Exponentially weighted mean read latency, in milliseconds. */
  latencyMs: number;
}

/**
 * A route's latency, when a stream starts from another's figures, is at most this many times
 * the fastest route's: it then gets about one first read in this many (reads go where
 * (in flight + 1) x latency is lowest).
 */
export const START_LATENCY_SPREAD = 10;

/**
 * Spreads reads over the routes to the database: each read goes where it is expected to
 * finish first, (reads in flight + 1) x mean latency, so a slow or congested route gets fewer
 * reads without being abandoned (its latency keeps being measured).
 */
export class PathSelector {
  readonly states: PathState[];

  constructor(paths: readonly DbPath[]) {
    if (paths.length === 0) throw new Error('at least one database path is required');
    this.states = paths.map((path) => ({ path, inFlight: 0, latencyMs: 1 }));
  }

  /**
   * Starts each route's mean latency from what an earlier stream over the same routes measured
   * (`latencyMs`, in the routes' order; ignored when the routes differ). Without it every route
   * starts at 1 ms, so a new stream sends half its first reads over a congested second route,
   * and its first batches wait on them. A route starts at most {@link START_LATENCY_SPREAD}
   * times the fastest one's latency: one that failed (see {@link PathSelector.penalize}) still
   * gets some first reads, and is measured again.
   */
  startFrom(latencyMs: readonly number[]): void {
    if (latencyMs.length !== this.states.length) return;
    const valid = latencyMs.filter((ms) => Number.isFinite(ms) && ms > 0);
    if (valid.length === 0) return;
    const cap = START_LATENCY_SPREAD * Math.min(...valid);
    this.states.forEach((s, i) => {
      const ms = latencyMs[i]!;
      if (Number.isFinite(ms) && ms > 0) s.latencyMs = Math.min(ms, cap);
    });
  }

  /** Each route's mean read latency now, in the routes' order (ms). */
  get latencies(): number[] {
    return this.states.map((s) => s.latencyMs);
  }

  /** The route to use next, avoiding `exclude` (e.g. the one that just failed) if possible. */
  pick(exclude?: PathState): PathState {
    let best: PathState | undefined;
    let bestScore = Infinity;
    for (const s of this.states) {
      if (s === exclude && this.states.length > 1) continue;
      const score = (s.inFlight + 1) * s.latencyMs;
      if (score < bestScore) {
        best = s;
        bestScore = score;
      }
    }
    return best!;
  }

  /**
   * Counts a failed read against the route, as a slow answer would: a route that fails fast
   * would otherwise keep the best score and get most first attempts.
   */
  penalize(state: PathState): void {
    this.observe(state, Math.max(state.latencyMs * 4, 100));
  }

  /** Folds one observed latency into the route's mean. */
  observe(state: PathState, latencyMs: number): void {
    state.latencyMs = 0.9 * state.latencyMs + 0.1 * latencyMs;
  }
}
