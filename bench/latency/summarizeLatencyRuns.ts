import { median, medianOfAll } from '../stream/stats.js';
import type { Placement } from '../stream/StreamBenchOptions.js';
import type { LatencyRatios, LatencyRun, LatencyScenario, RouteSet } from './LatencyBenchReport.js';

/** A summary row's identity. */
type RowKey = Pick<LatencyRun, 'placement' | 'routes' | 'rttMs' | 'scenario'>;

const sameRow = (a: RowKey, b: RowKey): boolean =>
  a.placement === b.placement &&
  a.routes === b.routes &&
  a.rttMs === b.rttMs &&
  a.scenario === b.scenario;

/**
 * Medians of the runs per placement, route set, round trip and scenario (pinned first, main
 * route first, by round trip, B before C). Throughput and its waits come from the `max`
 * runs, the trainer's waits and stalled share from the `trainer` runs of the same row. @internal
 */
export function summarizeLatencyRuns(runs: readonly LatencyRun[]) {
  const keys = new Map<string, RowKey>();
  for (const r of runs) keys.set(`${r.placement}/${r.routes}/${r.rttMs}/${r.scenario}`, r);
  const order = [...keys.values()].sort(
    (a, b) =>
      Number(a.placement !== 'pinned') - Number(b.placement !== 'pinned') ||
      Number(a.routes !== 'main') - Number(b.routes !== 'main') ||
      a.rttMs - b.rttMs ||
      a.scenario.localeCompare(b.scenario),
  );
  const rows = [];
  for (const key of order) {
    const these = runs.filter((r) => sameRow(r, key) && r.pace === 'max');
    const paced = runs.filter((r) => sameRow(r, key) && r.pace === 'trainer');
    if (these.length === 0) continue;
    const perGB = medianOfAll(these, (r) => r.loaderCpuSecondsPerGB);
    const rss = medianOfAll(these, (r) => r.loaderPeakRssBytes);
    const perCpu = medianOfAll(these, (r) => r.samplesPerLoaderAndProxyCpuSecond);
    const proxyCpu = medianOfAll(these, (r) => r.cpuSeconds.proxy);
    const loaderCpu = medianOfAll(these, (r) => r.cpuSeconds.loader);
    const inFlight = medianOfAll(these, (r) => r.readsInFlight?.mean);
    const inFlightMax = medianOfAll(these, (r) => r.readsInFlight?.max);
    const secondHalf = medianOfAll(these, (r) => r.ramp?.secondHalfSamplesPerSecond);
    const atRate = medianOfAll(these, (r) => r.ramp?.atRateMs);
    rows.push({
      placement: key.placement,
      scenario: key.scenario,
      routes: key.routes,
      rttMs: key.rttMs,
      runs: these.length,
      samplesPerSecond: median(these.map((r) => r.samplesPerSecond)),
      megabytesPerSecond: median(these.map((r) => r.megabytesPerSecond)),
      waitMs: {
        p50: median(these.map((r) => r.waitMs.p50)),
        p99: median(these.map((r) => r.waitMs.p99)),
      },
      firstBatchMs: median(these.map((r) => r.firstBatchMs)),
      ...(secondHalf === undefined || atRate === undefined
        ? {}
        : { ramp: { secondHalfSamplesPerSecond: secondHalf, atRateMs: atRate } }),
      ...(paced.length === 0
        ? {}
        : {
            trainer: {
              waitMs: {
                p50: median(paced.map((r) => r.waitMs.p50)),
                p99: median(paced.map((r) => r.waitMs.p99)),
              },
              stallFraction: median(paced.map((r) => r.stallFraction)),
            },
          }),
      ...(perGB === undefined ? {} : { loaderCpuSecondsPerGB: perGB }),
      ...(rss === undefined ? {} : { loaderPeakRssBytes: rss }),
      ...(perCpu === undefined ? {} : { samplesPerLoaderAndProxyCpuSecond: perCpu }),
      ...(loaderCpu === undefined ? {} : { loaderCpuSeconds: loaderCpu }),
      ...(proxyCpu === undefined ? {} : { proxyCpuSeconds: proxyCpu }),
      ...(inFlight === undefined || inFlightMax === undefined
        ? {}
        : { readsInFlight: { mean: inFlight, max: inFlightMax } }),
    });
  }
  return rows;
}

/** Medians of the runs of one placement, scenario, route set and round trip. */
export type LatencySummaryRow = ReturnType<typeof summarizeLatencyRuns>[number];

/**
 * The ratios of the issue for each placement, each the median over the rounds of the ratio
 * within a round (runs of one round ran minutes apart at most, so a drift of the shared
 * machine cancels out), and the paced trainer's p99 wait for C with the congested route. @internal
 */
export function latencyRatios(
  runs: readonly LatencyRun[],
): Partial<Record<Placement, LatencyRatios>> {
  const out: Partial<Record<Placement, LatencyRatios>> = {};
  for (const placement of [...new Set(runs.map((r) => r.placement))]) {
    out[placement] = placementRatios(runs.filter((r) => r.placement === placement));
  }
  return out;
}

/**
 * The full-speed (`max`) run of round `run` with that scenario and routes (and round trip, when
 * given) among `runs`. @internal
 */
export function fullSpeedRun(
  runs: readonly LatencyRun[],
  key: { run: number; scenario: LatencyScenario; routes: RouteSet; rttMs?: number | undefined },
): LatencyRun | undefined {
  return runs.find(
    (r) =>
      r.pace === 'max' &&
      r.run === key.run &&
      r.scenario === key.scenario &&
      r.routes === key.routes &&
      (key.rttMs === undefined || r.rttMs === key.rttMs),
  );
}

function placementRatios(runs: readonly LatencyRun[]): LatencyRatios {
  const findRun = (
    run: number,
    scenario: LatencyScenario,
    routes: RouteSet,
    rttMs?: number,
  ): LatencyRun | undefined => fullSpeedRun(runs, { run, scenario, routes, rttMs });
  const find = (...key: Parameters<typeof findRun>): number | undefined =>
    findRun(...key)?.samplesPerSecond;
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
      const c0 = find(run, 'C', 'main', 0);
      const ch = find(run, 'C', 'main', high);
      return c0 === undefined || ch === undefined ? undefined : ch / c0;
    });
    const secondHalfRatio = paired((run) => {
      const c0 = findRun(run, 'C', 'main', 0)?.ramp?.secondHalfSamplesPerSecond;
      const ch = findRun(run, 'C', 'main', high)?.ramp?.secondHalfSamplesPerSecond;
      return c0 === undefined || ch === undefined ? undefined : ch / c0;
    });
    if (ratio !== undefined) {
      out.cHighOverC0 = {
        highRttMs: high,
        ratio,
        ...(secondHalfRatio === undefined ? {} : { secondHalfRatio }),
      };
    }
  }
  const congested = paired((run) => {
    const b = find(run, 'B', 'main+congested');
    const c = find(run, 'C', 'main+congested');
    return b === undefined || c === undefined ? undefined : c / b;
  });
  if (congested !== undefined) out.cOverBCongested = congested;
  const pacedP99 = runs
    .filter((r) => r.pace === 'trainer' && r.scenario === 'C' && r.routes === 'main+congested')
    .map((r) => r.waitMs.p99);
  if (pacedP99.length > 0) out.cCongestedTrainerP99Ms = median(pacedP99);
  const pacedHigh = runs.filter(
    (r) => r.pace === 'trainer' && r.scenario === 'C' && r.routes === 'main' && r.rttMs === high,
  );
  const halves = pacedHigh.flatMap((r) => (r.stallHalves ? [r.stallHalves] : []));
  const pacedZero = runs.filter(
    (r) => r.pace === 'trainer' && r.scenario === 'C' && r.routes === 'main' && r.rttMs === 0,
  );
  if (high > 0 && pacedHigh.length > 0) {
    out.cHighTrainer = {
      rttMs: high,
      stallFraction: median(pacedHigh.map((r) => r.stallFraction)),
      p99Ms: median(pacedHigh.map((r) => r.waitMs.p99)),
      ...(halves.length === 0
        ? {}
        : {
            stallHalves: [median(halves.map((h) => h[0])), median(halves.map((h) => h[1]))] as [
              number,
              number,
            ],
          }),
      ...(pacedZero.length === 0
        ? {}
        : {
            atZero: {
              stallFraction: median(pacedZero.map((r) => r.stallFraction)),
              p99Ms: median(pacedZero.map((r) => r.waitMs.p99)),
            },
          }),
    };
  }
  return out;
}
