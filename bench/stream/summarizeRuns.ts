import { median, medianOfAll } from './stats.js';
import type { Placement } from './StreamBenchOptions.js';
import type { RunRecord, ScenarioName } from './StreamBenchReport.js';

const SCENARIOS: ScenarioName[] = [
  'tight-loop',
  'tight-loop-grouped',
  'service',
  'service-in-order-p2',
  'service-grouped',
  'service-mixed',
];

/**
 * Medians of the timed runs per placement and scenario, with each scenario's throughput
 * relative to the tight loop of the same placement. @internal
 */
export function summarizeRuns(runs: readonly RunRecord[], placements: Placement[]) {
  const rows = [];
  for (const placement of placements) {
    const timed = runs.filter((r) => r.placement === placement && r.phase === 'timed');
    const tight = timed.filter((r) => r.scenario === 'tight-loop');
    const tightRate = median(tight.map((r) => r.samplesPerSecond));
    for (const scenario of SCENARIOS) {
      const these = timed.filter((r) => r.scenario === scenario);
      if (these.length === 0) continue;
      const rate = median(these.map((r) => r.samplesPerSecond));
      const paired = these.flatMap((r) => {
        const base = tight.find((t) => t.run === r.run);
        return base ? [r.samplesPerSecond / base.samplesPerSecond] : [];
      });
      const db = medianOfAll(these, (r) => r.cpuSeconds.db);
      const dbNet = medianOfAll(these, (r) => r.cpuSeconds.dbNet);
      const background = medianOfAll(these, (r) => r.dbBackgroundCpuPerSecond);
      const loader = medianOfAll(these, (r) => r.cpuSeconds.loader);
      const perGB = medianOfAll(these, (r) =>
        r.cpuSeconds.loader === undefined ? undefined : r.cpuSeconds.loader / (r.bytes / 1e9),
      );
      const readerCpu = (r: RunRecord): number => r.cpuSeconds.loader ?? r.cpuSeconds.client;
      const perGBReader = medianOfAll(these, (r) => readerCpu(r) / (r.bytes / 1e9));
      const perSample = medianOfAll(these, (r) => (readerCpu(r) / r.samples) * 1e6);
      const p50 = medianOfAll(these, (r) => r.waitMs?.p50);
      const p99 = medianOfAll(these, (r) => r.waitMs?.p99);
      rows.push({
        placement,
        scenario,
        runs: these.length,
        ...(these[0]!.concurrency === undefined ? {} : { concurrency: these[0]!.concurrency }),
        ...(these[0]!.groupReads === undefined ? {} : { groupReads: these[0]!.groupReads }),
        samplesPerSecond: rate,
        megabytesPerSecond: median(these.map((r) => r.megabytesPerSecond)),
        ratioToTightLoop: rate / tightRate,
        pairedRatioToTightLoop: median(paired),
        cpuSeconds: {
          ...(db === undefined ? {} : { db }),
          ...(dbNet === undefined ? {} : { dbNet }),
          ...(loader === undefined ? {} : { loader }),
          client: median(these.map((r) => r.cpuSeconds.client)),
        },
        ...(background === undefined ? {} : { dbBackgroundCpuPerSecond: background }),
        ...(perGB === undefined ? {} : { loaderCpuSecondsPerGB: perGB }),
        ...(perGBReader === undefined || perSample === undefined
          ? {}
          : { readerCpu: { secondsPerGB: perGBReader, microsPerSample: perSample } }),
        ...(p50 === undefined || p99 === undefined ? {} : { waitMs: { p50, p99 } }),
      });
    }
  }
  return rows;
}
