import { describe, expect, it } from 'vitest';
import type { ScaleRun } from '../../scale/ScaleBenchReport.js';
import { resolveScaleBenchOptions } from '../../scale/ScaleBenchOptions.js';
import { expectedSamples } from '../../scale/runScaleBench.js';
import { SCALE_SAMPLE_BYTES, scaleIngestEntry, scaleSampleBytes } from '../../scale/scaleSample.js';
import { rssVerdict, summarizeScaleRuns } from '../../scale/summarizeScaleRuns.js';

describe('scaleSampleBytes', () => {
  it('gives 100 bytes, the same for the same index, distinct across indices', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const bytes = scaleSampleBytes(i);
      expect(bytes.length).toBe(SCALE_SAMPLE_BYTES);
      seen.add(bytes.toString('hex'));
    }
    expect(seen.size).toBe(2000);
    expect(scaleSampleBytes(123_456).equals(scaleSampleBytes(123_456))).toBe(true);
    expect(scaleSampleBytes(999_999).readUInt32BE(0)).toBe(999_999);
    expect(() => scaleSampleBytes(-1)).toThrow(RangeError);
    expect(() => scaleSampleBytes(1.5)).toThrow(RangeError);
  });

  it('makes ingest entries that carry their bytes and a padded key', () => {
    const e = scaleIngestEntry(42);
    expect(e).toMatchObject({ sourceKey: 's0000042', label: 2, metadata: {} });
    expect(e.data?.equals(scaleSampleBytes(42))).toBe(true);
  });
});

function run(size: number, peakMiB: number, beforeMiB: number, extra: Partial<ScaleRun> = {}) {
  return {
    size,
    split: `scale_n${size}/train`,
    run: 0,
    seed: 0,
    splitSamples: size,
    samples: size,
    batches: Math.ceil(size / 256),
    bytes: size * 100,
    wallSeconds: 1,
    samplesPerSecond: size,
    firstBatchMs: 100,
    loaderCpuMsPerBatch: 2,
    clientCpuSeconds: 1,
    loaderPeakRssBytes: peakMiB * 2 ** 20,
    loaderRssBeforeBytes: beforeMiB * 2 ** 20,
    ...extra,
  } satisfies ScaleRun;
}

describe('summarizeScaleRuns and rssVerdict', () => {
  it('takes medians per size, ascending, with the RSS growth', () => {
    const rows = summarizeScaleRuns([
      run(100_000, 170, 160),
      run(10_000, 162, 160, { firstBatchMs: 50 }),
      run(10_000, 150, 140, { firstBatchMs: 70 }),
      run(10_000, 180, 150, { firstBatchMs: 300 }),
    ]);
    expect(rows.map((r) => r.size)).toEqual([10_000, 100_000]);
    expect(rows[0]).toMatchObject({
      runs: 3,
      loaderPeakRssMiB: 162,
      loaderRssBeforeMiB: 150,
      // The median of each run's growth (2, 10, 30), not the difference of the medians.
      loaderRssGrowthMiB: 10,
      firstBatchMs: 70,
    });
    expect(rows[1]).toMatchObject({ runs: 1, loaderRssGrowthMiB: 10 });
  });

  it('leaves out a figure that some run lacks', () => {
    const rows = summarizeScaleRuns([
      run(1000, 100, 90),
      run(1000, 100, 90, { loaderPeakRssBytes: undefined }),
    ]);
    expect(rows[0]!.loaderPeakRssMiB).toBeUndefined();
    expect(rows[0]!.loaderRssGrowthMiB).toBeUndefined();
    expect(rows[0]!.loaderRssBeforeMiB).toBe(90);
    expect(rssVerdict(rows)).toBeUndefined();
  });

  it('compares the largest size with the smallest against 10%', () => {
    const flat = rssVerdict(summarizeScaleRuns([run(10_000, 100, 90), run(1_000_000, 109, 90)]));
    expect(flat).toMatchObject({ smallest: 10_000, largest: 1_000_000, met: true, target: 1.1 });
    expect(flat!.ratio).toBeCloseTo(1.09);
    const steep = rssVerdict(summarizeScaleRuns([run(10_000, 100, 90), run(1_000_000, 130, 90)]));
    expect(steep).toMatchObject({ met: false });
    expect(rssVerdict(summarizeScaleRuns([run(10_000, 100, 90)]))).toBeUndefined();
  });
});

describe('resolveScaleBenchOptions', () => {
  const db = { contactPoints: ['127.0.0.1'], port: 9042 } as Parameters<
    typeof resolveScaleBenchOptions
  >[0]['db'];

  it('fills in the full run and the quick run', () => {
    const full = resolveScaleBenchOptions({ db, stateRoot: '/repo/.state' });
    expect(full).toMatchObject({
      sizes: [10_000, 100_000, 1_000_000],
      runs: 3,
      batchSize: 256,
      dataset: 'bench_scale_100b',
      outDir: '/repo/.state/bench',
    });
    const quick = resolveScaleBenchOptions({ db, stateRoot: '/repo/.state', quick: true });
    expect(quick).toMatchObject({
      sizes: [1000, 10_000],
      runs: 1,
      dataset: 'bench_scale_100b_n10000',
    });
  });

  it('sorts and deduplicates sizes and refuses bad numbers', () => {
    const o = resolveScaleBenchOptions({ db, stateRoot: '/s', sizes: [500, 20, 500] });
    expect(o.sizes).toEqual([20, 500]);
    expect(o.dataset).toBe('bench_scale_100b_n500');
    expect(() => resolveScaleBenchOptions({ db, stateRoot: '/s', sizes: [] })).toThrow(/--sizes/);
    expect(() => resolveScaleBenchOptions({ db, stateRoot: '/s', sizes: [0] })).toThrow(/--sizes/);
    expect(() => resolveScaleBenchOptions({ db, stateRoot: '/s', runs: 0 })).toThrow(/--runs/);
  });
});

describe('expectedSamples', () => {
  it('is the whole split, or the whole batches that reach samplesPerRun', () => {
    expect(expectedSamples(10_000, { batchSize: 256, samplesPerRun: undefined })).toBe(10_000);
    // 10,000 samples in batches of 256: the 40th batch reaches it, 10,240 samples.
    expect(expectedSamples(1_000_000, { batchSize: 256, samplesPerRun: 10_000 })).toBe(10_240);
    expect(expectedSamples(5_000, { batchSize: 256, samplesPerRun: 10_000 })).toBe(5_000);
    expect(() =>
      resolveScaleBenchOptions({
        db: { contactPoints: ['127.0.0.1'], port: 9042 } as Parameters<
          typeof resolveScaleBenchOptions
        >[0]['db'],
        stateRoot: '/s',
        samplesPerRun: 0,
      }),
    ).toThrow(/--samples-per-run/);
  });
});
