import { describe, expect, it } from 'vitest';
import type { LatencyRun } from '../../latency/LatencyBenchReport.js';
import { latencyRatios, summarizeLatencyRuns } from '../../latency/summarizeLatencyRuns.js';

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
});
