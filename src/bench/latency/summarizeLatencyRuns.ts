import { median } from '../stream/stats.js';
import type {
  LatencyRatios,
  LatencyRun,
  LatencyScenario,
  LatencySummaryRow,
  RouteSet,
} from './LatencyBenchReport.js';

/**
 * Medians of the runs per route set, round trip and scenario (main route first, by round
 * trip, B before C).
 *
 * @internal
 */
export function summarizeLatencyRuns(runs: readonly LatencyRun[]): LatencySummaryRow[] {
  const keys = new Map<string, { routes: RouteSet; rttMs: number; scenario: LatencyScenario }>();
  for (const r of runs) {
    keys.set(`${r.routes}/${r.rttMs}/${r.scenario}`, r);
  }
  const order = [...keys.values()].sort(
    (a, b) =>
      Number(a.routes !== 'main') - Number(b.routes !== 'main') ||
      a.rttMs - b.rttMs ||
      a.scenario.localeCompare(b.scenario),
  );
  return order.map(({ routes, rttMs, scenario }) => {
    const these = runs.filter(
      (r) => r.routes === routes && r.rttMs === rttMs && r.scenario === scenario,
    );
    const optional = (pick: (r: LatencyRun) => number | undefined): number | undefined => {
      const values = these.map(pick).filter((v): v is number => v !== undefined);
      return values.length === these.length ? median(values) : undefined;
    };
    const perGB = optional((r) => r.loaderCpuSecondsPerGB);
    const rss = optional((r) => r.loaderPeakRssBytes);
    return {
      scenario,
      routes,
      rttMs,
      runs: these.length,
      samplesPerSecond: median(these.map((r) => r.samplesPerSecond)),
      megabytesPerSecond: median(these.map((r) => r.megabytesPerSecond)),
      waitMs: {
        p50: median(these.map((r) => r.waitMs.p50)),
        p99: median(these.map((r) => r.waitMs.p99)),
      },
      ...(perGB === undefined ? {} : { loaderCpuSecondsPerGB: perGB }),
      ...(rss === undefined ? {} : { loaderPeakRssBytes: rss }),
    };
  });
}

/**
 * The ratios of the issue, each the median over the rounds of the ratio within a round (runs
 * of one round ran minutes apart at most, so a drift of the shared machine cancels out).
 *
 * @internal
 */
export function latencyRatios(runs: readonly LatencyRun[]): LatencyRatios {
  const rate = (
    run: number,
    scenario: LatencyScenario,
    routes: RouteSet,
    rttMs?: number,
  ): number | undefined =>
    runs.find(
      (r) =>
        r.run === run &&
        r.scenario === scenario &&
        r.routes === routes &&
        (rttMs === undefined || r.rttMs === rttMs),
    )?.samplesPerSecond;
  const rounds = [...new Set(runs.map((r) => r.run))];
  const paired = (f: (run: number) => number | undefined): number | undefined => {
    const values = rounds.map(f).filter((v): v is number => v !== undefined);
    return values.length === 0 ? undefined : median(values);
  };
  const mainRtts = runs.filter((r) => r.routes === 'main').map((r) => r.rttMs);
  const high = Math.max(...mainRtts);
  const out: LatencyRatios = {};
  if (mainRtts.includes(0) && high > 0) {
    const ratio = paired((run) => {
      const c0 = rate(run, 'C', 'main', 0);
      const ch = rate(run, 'C', 'main', high);
      return c0 === undefined || ch === undefined ? undefined : ch / c0;
    });
    if (ratio !== undefined) out.cHighOverC0 = { highRttMs: high, ratio };
  }
  const congested = paired((run) => {
    const b = rate(run, 'B', 'main+congested');
    const c = rate(run, 'C', 'main+congested');
    return b === undefined || c === undefined ? undefined : c / b;
  });
  if (congested !== undefined) out.cOverBCongested = congested;
  return out;
}
