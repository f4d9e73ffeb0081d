import type { CeilingBenchReport } from '../ceiling/runCeilingBench.js';
import type { LatencyBenchReport } from '../latency/runLatencyBench.js';
import type { ScaleBenchReport } from '../scale/runScaleBench.js';
import type { Placement } from '../stream/StreamBenchOptions.js';
import type { StreamBenchReport } from '../stream/runStreamBench.js';

/** One of the issue's targets, as measured in each placement that ran. */
export interface SuiteTarget {
  /** What is compared, e.g. `C / A at 0 ms`. */
  name: string;
  /** The target, e.g. `>= 0.9`. */
  target: string;
  /** Where the figure comes from (a scenario of the suite). */
  source: string;
  /** The figure per placement (scale runs unpinned only). */
  measured: Partial<Record<Placement, number>>;
  /** Whether the pinned figure (else the unpinned one) meets the target; undefined: not run. */
  met: boolean | undefined;
}

/** The reports the targets are read from; any may be missing (not run). */
export interface SuiteReports {
  /** `bench stream` with the ImageNet-size payload (scenarios A to C at 0 ms). */
  stream?: StreamBenchReport;
  latency?: LatencyBenchReport;
  scale?: ScaleBenchReport;
  ceiling?: CeilingBenchReport;
}

const PLACEMENTS: Placement[] = ['pinned', 'unpinned'];

/**
 * The issue's targets against the suite's figures: C >= 0.9 x A at 0 ms; C at 150 ms >=
 * 0.95 x C at 0 ms and a trainer paced at 80% of it stalled at most 1% with a p99 wait of at
 * most 30 ms (issue 42); with the congested route C >= 2 x B and C's batch wait p99 <= 30 ms; loader
 * RSS flat within 10% from 10^4 to 10^6 samples; >= 500 MB delivered per loader CPU second.
 * A pure function of the reports.
 */
export function suiteTargets(reports: SuiteReports): SuiteTarget[] {
  const streamC = (p: Placement) =>
    reports.stream?.summary.find((r) => r.placement === p && r.scenario === 'service');
  const ratios = (p: Placement) => reports.latency?.ratios[p];
  /** C's paced trainer at 150 ms (absent: the run's largest round trip was another). */
  const pacedAt150 = (p: Placement) => {
    const t = ratios(p)?.cHighTrainer;
    return t && t.rttMs === 150 ? t : undefined;
  };
  const rss = reports.scale?.rss;
  // Name, target (`>=` or `<=` a bound), source, and the figure in a placement.
  const targets: [string, string, string, (p: Placement) => number | undefined][] = [
    [
      'C / A at 0 ms (out-of-order service over the tight loop)',
      '>= 0.9',
      'bench stream',
      (p) => streamC(p)?.pairedRatioToTightLoop,
    ],
    [
      'C at 150 ms / C at 0 ms',
      '>= 0.95',
      'bench latency',
      (p) => {
        const r = ratios(p)?.cHighOverC0;
        return r && r.highRttMs === 150 ? r.ratio : undefined;
      },
    ],
    [
      "C's paced trainer at 150 ms, share of its time stalled (paced at 80% of C at 0 ms)",
      '<= 0.01',
      'bench latency',
      (p) => pacedAt150(p)?.stallFraction,
    ],
    [
      "C's paced trainer at 150 ms, batch wait p99, ms",
      '<= 30',
      'bench latency',
      (p) => pacedAt150(p)?.p99Ms,
    ],
    ['C / B with the congested route', '>= 2', 'bench latency', (p) => ratios(p)?.cOverBCongested],
    [
      "C's batch wait p99 with the congested route (paced trainer), ms",
      '<= 30',
      'bench latency',
      (p) => ratios(p)?.cCongestedTrainerP99Ms,
    ],
    [
      `loader peak RSS, largest split / smallest${rss ? ` (${rss.largest} / ${rss.smallest} samples)` : ''}`,
      '<= 1.10',
      'bench scale',
      (p) => (p === 'unpinned' ? rss?.ratio : undefined),
    ],
    [
      'MB delivered per loader CPU second (C at 0 ms)',
      '>= 500',
      'bench stream',
      (p) => {
        const perGB = streamC(p)?.loaderCpuSecondsPerGB;
        return perGB === undefined || perGB <= 0 ? undefined : 1000 / perGB;
      },
    ],
  ];
  return targets.map(([name, target, source, pick]) => {
    const measured: Partial<Record<Placement, number>> = {};
    for (const p of PLACEMENTS) {
      const v = pick(p);
      if (v !== undefined && Number.isFinite(v)) measured[p] = v;
    }
    const primary = measured.pinned ?? measured.unpinned;
    const bound = Number(target.slice(3));
    const met = target.startsWith('>=') ? primary! >= bound : primary! <= bound;
    return { name, target, source, measured, met: primary === undefined ? undefined : met };
  });
}

/** A row of scenario D next to A of the same placement. */
export interface LatencyVsA {
  placement: Placement;
  scenario: 'B' | 'C';
  routes: string;
  rttMs: number;
  samplesPerSecond: number;
  /** Samples/s over the tight loop's (A, at 0 ms and without the proxy) in the same placement. */
  ratioToA: number;
}

/**
 * Scenario D's rows as a share of A (the tight loop of `bench stream` on the same dataset, same
 * placement, same suite run); rows whose placement has no A are left out.
 */
export function latencyVsA(reports: Pick<SuiteReports, 'stream' | 'latency'>): LatencyVsA[] {
  const out: LatencyVsA[] = [];
  for (const row of reports.latency?.summary ?? []) {
    const a = reports.stream?.summary.find(
      (r) => r.placement === row.placement && r.scenario === 'tight-loop',
    );
    if (!a || !(a.samplesPerSecond > 0)) continue;
    out.push({
      placement: row.placement,
      scenario: row.scenario,
      routes: row.routes,
      rttMs: row.rttMs,
      samplesPerSecond: row.samplesPerSecond,
      ratioToA: row.samplesPerSecond / a.samplesPerSecond,
    });
  }
  return out;
}
