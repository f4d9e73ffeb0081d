import { describe, expect, it } from 'vitest';
import type { LatencyRun } from '../../latency/LatencyBenchReport.js';
import { latencyRatios, summarizeLatencyRuns } from '../../latency/summarizeLatencyRuns.js';
import { latencyTable } from '../../latency/formatLatencyReport.js';
import { sumOfSamples } from '../../measure/gaugeSampler.js';

function run(over: Partial<LatencyRun>): LatencyRun {
  return {
    placement: 'unpinned',
    pace: 'max',
    scenario: 'C',
    ordering: 'out-of-order',
    routes: 'main',
    rttMs: 0,
    run: 0,
    seed: 0,
    samples: 100,
    bytes: 1e7,
    wallSeconds: 1,
    samplesPerSecond: 100,
    megabytesPerSecond: 10,
    waitMs: { p50: 1, p99: 2, max: 3 },
    firstBatchMs: 5,
    warmupBatches: 0,
    stallFraction: 0,
    cpuSeconds: { client: 0.1 },
    ...over,
  };
}

describe('summarizeLatencyRuns', () => {
  it('keeps placements apart and takes throughput from full-speed runs, stalls from paced ones', () => {
    const runs = [
      run({ placement: 'pinned', samplesPerSecond: 300 }),
      run({ placement: 'unpinned', samplesPerSecond: 200, run: 0 }),
      run({ placement: 'unpinned', samplesPerSecond: 400, run: 1 }),
      run({ placement: 'unpinned', samplesPerSecond: 250, run: 2 }),
      run({
        placement: 'unpinned',
        pace: 'trainer',
        stepMs: 32,
        samplesPerSecond: 90,
        waitMs: { p50: 0.5, p99: 40, max: 50 },
        stallFraction: 0.2,
      }),
    ];
    const rows = summarizeLatencyRuns(runs);
    expect(rows.map((r) => [r.placement, r.samplesPerSecond])).toEqual([
      ['pinned', 300],
      ['unpinned', 250],
    ]);
    expect(rows[0]!.trainer).toBeUndefined();
    expect(rows[1]!.trainer).toEqual({ waitMs: { p50: 0.5, p99: 40 }, stallFraction: 0.2 });
    expect(rows[1]!.runs).toBe(3);
  });

  it("takes medians of the loader's and the proxy's CPU, samples per their CPU second and reads in flight", () => {
    const runs = [1, 2, 3].map((k) =>
      run({
        run: k,
        cpuSeconds: { client: 0.1, loader: k, proxy: 2 * k },
        samplesPerLoaderAndProxyCpuSecond: 100 / (3 * k),
        readsInFlight: { mean: 10 * k, max: 20 * k },
      }),
    );
    const [row] = summarizeLatencyRuns(runs);
    expect(row!.loaderCpuSeconds).toBe(2);
    expect(row!.proxyCpuSeconds).toBe(4);
    expect(row!.samplesPerLoaderAndProxyCpuSecond).toBeCloseTo(100 / 6);
    expect(row!.readsInFlight).toEqual({ mean: 20, max: 40 });
    const [, , line] = latencyTable([row!]);
    expect(line).toMatch(/\| 2\.0 \/ 4\.0 \| 17 \| 20 \/ 40 \|$/);
    // A run without the figures (no proxy pid, no metrics) leaves them out, shown as '-'.
    const [bare] = summarizeLatencyRuns([run({})]);
    expect(bare!.readsInFlight).toBeUndefined();
    expect(latencyTable([bare!])[2]).toMatch(/\| - \/ - \| - \| - \|$/);
  });

  it('pairs ratios within a round and placement', () => {
    const runs: LatencyRun[] = [];
    for (const placement of ['pinned', 'unpinned'] as const) {
      const scale = placement === 'pinned' ? 1 : 2;
      for (let r = 0; r < 3; r++) {
        runs.push(run({ placement, run: r, rttMs: 0, samplesPerSecond: 100 * (r + 1) * scale }));
        runs.push(run({ placement, run: r, rttMs: 150, samplesPerSecond: 50 * (r + 1) * scale }));
        runs.push(
          run({
            placement,
            run: r,
            routes: 'main+congested',
            rttMs: 20,
            scenario: 'B',
            samplesPerSecond: 10,
          }),
        );
        runs.push(
          run({
            placement,
            run: r,
            routes: 'main+congested',
            rttMs: 20,
            samplesPerSecond: 30 * scale,
          }),
        );
      }
      runs.push(
        run({
          placement,
          pace: 'trainer',
          routes: 'main+congested',
          rttMs: 20,
          waitMs: { p50: 1, p99: 25 * scale, max: 99 },
        }),
      );
    }
    const ratios = latencyRatios(runs);
    expect(ratios.pinned).toEqual({
      cHighOverC0: { highRttMs: 150, ratio: 0.5 },
      cOverBCongested: 3,
      cCongestedTrainerP99Ms: 25,
    });
    expect(ratios.unpinned?.cOverBCongested).toBe(6);
    expect(ratios.unpinned?.cCongestedTrainerP99Ms).toBe(50);
  });

  it("puts the paced trainer's stall at 0 ms beside the one at the largest round trip", () => {
    const paced = (rttMs: number, r: number, stallFraction: number, p99: number): LatencyRun =>
      run({ pace: 'trainer', rttMs, run: r, stallFraction, waitMs: { p50: 0, p99, max: p99 } });
    const runs = [0, 1, 2].flatMap((r) => [
      paced(0, r, 0.01 * (r + 1), 5 + r),
      paced(150, r, 0.02 * (r + 1), 10 + r),
    ]);
    const t = latencyRatios(runs).unpinned?.cHighTrainer;
    expect(t).toEqual({
      rttMs: 150,
      stallFraction: 0.04,
      p99Ms: 11,
      atZero: { stallFraction: 0.02, p99Ms: 6 },
    });
  });
});

describe('sumOfSamples', () => {
  it('sums a gauge over its label sets and ignores other names and comments', () => {
    const text = [
      '# HELP scylla_loader_db_requests_in_flight Reads in flight',
      '# TYPE scylla_loader_db_requests_in_flight gauge',
      'scylla_loader_db_requests_in_flight{path="main"} 12',
      'scylla_loader_db_requests_in_flight{path="extra"} 3',
      'scylla_loader_db_requests_in_flight_max 99',
      'scylla_loader_held_bytes 1e6',
    ].join('\n');
    expect(sumOfSamples(text, 'scylla_loader_db_requests_in_flight')).toBe(15);
    expect(sumOfSamples(text, 'scylla_loader_held_bytes')).toBe(1e6);
    expect(sumOfSamples(text, 'scylla_loader_absent')).toBeUndefined();
  });
});
