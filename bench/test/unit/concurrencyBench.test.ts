import { describe, expect, it } from 'vitest';
import { checkExactlyOnce, combineExactlyOnce } from '../../concurrency/checkExactlyOnce.js';
import type { ConcurrencyRun } from '../../concurrency/ConcurrencyBenchReport.js';
import { interleavedSchedule } from '../../concurrency/interleavedSchedule.js';
import { summarizeConcurrencyRuns } from '../../concurrency/summarizeConcurrencyRuns.js';

describe('interleavedSchedule', () => {
  it('measures every k once per round, each round starting one k later', () => {
    expect(interleavedSchedule([1, 2, 4], 3)).toEqual([
      { streams: 1, run: 0 },
      { streams: 2, run: 0 },
      { streams: 4, run: 0 },
      { streams: 2, run: 1 },
      { streams: 4, run: 1 },
      { streams: 1, run: 1 },
      { streams: 4, run: 2 },
      { streams: 1, run: 2 },
      { streams: 2, run: 2 },
    ]);
  });
});

describe('checkExactlyOnce', () => {
  const ids = ['a', 'b', 'c', 'd'];

  it('accepts ranks that together hold every id once', () => {
    expect(checkExactlyOnce(ids, [['c', 'a'], ['d'], ['b']])).toEqual({
      expected: 4,
      delivered: 4,
      duplicates: 0,
      missing: 0,
      unexpected: 0,
      ok: true,
    });
  });

  it('counts duplicates across and within ranks, missing and unexpected ids', () => {
    const check = checkExactlyOnce(ids, [
      ['a', 'b', 'a'],
      ['b', 'x'],
    ]);
    expect(check).toMatchObject({ delivered: 5, duplicates: 2, missing: 2, unexpected: 1 });
    expect(check.ok).toBe(false);
  });

  it('combines epochs: ok only when every epoch is, empty is not ok', () => {
    const good = checkExactlyOnce(ids, [ids]);
    const bad = checkExactlyOnce(ids, [['a']]);
    expect(combineExactlyOnce([good, good])).toMatchObject({ expected: 8, ok: true });
    expect(combineExactlyOnce([good, bad])).toMatchObject({ missing: 3, ok: false });
    expect(combineExactlyOnce([]).ok).toBe(false);
  });
});

describe('summarizeConcurrencyRuns', () => {
  const run = (streams: number, r: number, rate: number, extra: Partial<ConcurrencyRun> = {}) =>
    ({
      streams,
      run: r,
      seed: r,
      samples: 1000,
      bytes: 1e8,
      wallSeconds: 1000 / rate,
      samplesPerSecond: rate,
      megabytesPerSecond: rate / 10,
      perStreamSamplesPerSecond: Array.from({ length: streams }, (_, i) => rate / streams + i),
      waitMs: { p50: 10 * r, p99: 100 * r, max: 1000 },
      firstBatchMsMax: 5,
      cpuSeconds: { loader: r, client: 1 },
      loaderCpuSecondsPerGB: 10 * r,
      exactlyOnce: checkExactlyOnce(['a'], [['a']]),
      ...extra,
    }) satisfies ConcurrencyRun;

  it('takes medians per k over interleaved runs and scales against the smallest k', () => {
    const runs = [
      run(2, 0, 300),
      run(1, 0, 100),
      run(2, 1, 500),
      run(1, 1, 120, { loaderPeakRssBytes: 7 }),
      run(2, 2, 400, { exactlyOnce: checkExactlyOnce(['a'], [['a', 'a']]) }),
      run(1, 2, 110),
    ];
    const { summary, scalingBase } = summarizeConcurrencyRuns(runs);
    expect(scalingBase).toBe(1);
    expect(summary.map((r) => r.streams)).toEqual([1, 2]);
    const [one, two] = summary;
    expect(one).toMatchObject({
      runs: 3,
      samplesPerSecond: 110,
      megabytesPerSecond: 11,
      perStreamSamplesPerSecond: { min: 110, median: 110 },
      waitMs: { p50: 10, p99: 100 },
      cpuSeconds: { loader: 1, client: 1 },
      loaderCpuSecondsPerGB: 10,
      // Only one run could measure it: the median of those that did.
      loaderPeakRssBytes: 7,
      scaling: 1,
      exactlyOnce: true,
    });
    // Per run: rates 150/151, 250/251, 200/201 -> min median 200, median-of-ranks median 200.5.
    expect(two).toMatchObject({
      samplesPerSecond: 400,
      perStreamSamplesPerSecond: { min: 200, median: 200.5 },
      scaling: 400 / 110,
      exactlyOnce: false,
    });
    expect(two).not.toHaveProperty('loaderPeakRssBytes');
    expect(two!.cpuSeconds).not.toHaveProperty('db');
  });
});
