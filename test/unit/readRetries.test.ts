import cassandra from 'cassandra-driver';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import { ReadRetries } from '../../src/core/fetch/ReadRetries.js';
import { retryBackoffMs } from '../../src/core/fetch/retryBackoffMs.js';
import { createLoaderMetrics, type LoaderMetrics } from '../../src/core/metrics/loaderMetrics.js';

const timeout = (): Error => new cassandra.errors.OperationTimedOutError('read timed out');

async function gauge(metrics: LoaderMetrics): Promise<number> {
  return (await metrics.dbRequestsInFlight.get()).values[0]?.value ?? 0;
}

async function retries(metrics: LoaderMetrics, path: string): Promise<number> {
  const values = (await metrics.dbRetries.get()).values;
  return values.find((v) => v.labels['path'] === path)?.value ?? 0;
}

describe('retryBackoffMs', () => {
  it('doubles from the base with each attempt', () => {
    const mid = (): number => 0.5; // jitter factor 1
    expect([1, 2, 3, 4, 5].map((a) => retryBackoffMs(a, 50, mid))).toEqual([
      50, 100, 200, 400, 800,
    ]);
  });

  it('jitters each wait within [0.5, 1.5) of its step', () => {
    expect(retryBackoffMs(3, 50, () => 0)).toBe(100);
    expect(retryBackoffMs(3, 50, () => 0.999)).toBeCloseTo(299.8);
    for (let i = 0; i < 1000; i++) {
      const ms = retryBackoffMs(2, 10);
      expect(ms).toBeGreaterThanOrEqual(10);
      expect(ms).toBeLessThan(30);
    }
  });
});

describe('ReadRetries', () => {
  let metrics: LoaderMetrics;
  beforeEach(() => {
    vi.useFakeTimers();
    metrics = createLoaderMetrics();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const make = (readAttempts = 3): ReadRetries =>
    new ReadRetries({ readAttempts, retryBaseMs: 100, metrics, random: () => 0.5 });

  it('retries a timeout after the backoff, counted as in flight while it waits', async () => {
    const r = make();
    const retry = vi.fn();
    expect(r.afterFailure(timeout(), 1, 'main', retry)).toBeUndefined();
    expect(r.waiting).toBe(1);
    expect(await gauge(metrics)).toBe(1);
    expect(await retries(metrics, 'main')).toBe(1);
    vi.advanceTimersByTime(99);
    expect(retry).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(retry).toHaveBeenCalledTimes(1);
    expect(r.waiting).toBe(0);
    expect(await gauge(metrics)).toBe(0);
  });

  it('waits twice as long after the second failure', () => {
    const r = make();
    const retry = vi.fn();
    r.afterFailure(timeout(), 2, 'main', retry);
    vi.advanceTimersByTime(199);
    expect(retry).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(retry).toHaveBeenCalledTimes(1);
  });

  it('ends the stream with UNAVAILABLE once readAttempts attempts failed', () => {
    const r = make(3);
    const retry = vi.fn();
    const err = r.afterFailure(timeout(), 3, 'main', retry);
    expect(err).toBeInstanceOf(LoaderError);
    expect((err as LoaderError).code).toBe('UNAVAILABLE');
    // The client reads what went wrong in words of its own, never the driver's text (hosts).
    const message = (err as LoaderError).message;
    expect(message).toMatch(
      /after 3 attempt\(s\): a database request got no answer in time.*resume/,
    );
    expect(message).not.toContain('read timed out');
    expect((err as LoaderError).cause).toBeInstanceOf(Error);
    expect(r.waiting).toBe(0);
    vi.runAllTimers();
    expect(retry).not.toHaveBeenCalled();
  });

  it('ends the stream with an error that is not the database passing trouble, as it is', () => {
    const r = make();
    const bug = new TypeError('not a retryable thing');
    const retry = vi.fn();
    expect(r.afterFailure(bug, 1, 'main', retry)).toBe(bug);
    const syntax = new cassandra.errors.ResponseError(
      cassandra.types.responseErrorCodes.syntaxError,
      'bad query',
    );
    expect(r.afterFailure(syntax, 1, 'main', retry)).toBe(syntax);
    vi.runAllTimers();
    expect(retry).not.toHaveBeenCalled();
  });

  it('close cancels the retries waiting and takes them off the gauge', async () => {
    const r = make();
    const retry = vi.fn();
    r.afterFailure(timeout(), 1, 'main', retry);
    r.afterFailure(timeout(), 2, 'other', retry);
    expect(await gauge(metrics)).toBe(2);
    r.close();
    expect(r.waiting).toBe(0);
    expect(await gauge(metrics)).toBe(0);
    vi.runAllTimers();
    expect(retry).not.toHaveBeenCalled();
  });
});
