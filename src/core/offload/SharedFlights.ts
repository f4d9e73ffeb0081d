/** One computation in flight and the callers waiting for it. @internal */
interface Flight<T> {
  result: Promise<T>;
  /** Fired when the last waiter has gone: the computation stops. */
  stop: AbortController;
  waiters: number;
}

/**
 * Computations shared by the callers that ask for one key while it runs (single flight), each
 * caller with its own AbortSignal: a caller whose signal fires stops waiting at once, and once
 * every caller has stopped waiting the computation itself is stopped (its signal fires) and
 * forgotten, so the next caller starts a fresh one. This is what makes work that grows with a
 * split's size stop when no call needs it any more, while one cancelled rank of a job does not
 * cancel the order its other ranks are waiting for.
 */
export class SharedFlights<T> {
  private readonly flights = new Map<string, Flight<T>>();

  /** Computations in flight (each with at least one waiter). */
  get size(): number {
    return this.flights.size;
  }

  /** True while a computation of `key` runs. */
  has(key: string): boolean {
    return this.flights.has(key);
  }

  /**
   * Waits for the computation of `key`, starting it with `start` unless one is running. A
   * caller without a signal waits until it ends (and so keeps it going). Rejects with the
   * signal's reason (the call's CANCELLED, or an AbortError) when `signal` fires first; with
   * the computation's error when it fails, for every waiter.
   */
  join(key: string, start: (signal: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    let flight = this.flights.get(key);
    if (!flight) {
      const stop = new AbortController();
      const begun: Flight<T> = { result: start(stop.signal), stop, waiters: 0 };
      flight = begun;
      this.flights.set(key, begun);
      const forget = (): void => {
        if (this.flights.get(key) === begun) this.flights.delete(key);
      };
      // A computation stopped for want of waiters rejects with nobody listening.
      begun.result.then(forget, forget);
    }
    flight.waiters++;
    if (!signal) return flight.result;
    const joined = flight;
    return new Promise<T>((resolve, reject) => {
      const leave = (): void => {
        reject(signal.reason as Error);
        if (--joined.waiters > 0) return;
        if (this.flights.get(key) === joined) this.flights.delete(key);
        joined.stop.abort(signal.reason);
      };
      signal.addEventListener('abort', leave, { once: true });
      joined.result.then(
        (value) => {
          signal.removeEventListener('abort', leave);
          joined.waiters--;
          resolve(value);
        },
        (err: unknown) => {
          signal.removeEventListener('abort', leave);
          joined.waiters--;
          reject(err as Error);
        },
      );
    });
  }
}
