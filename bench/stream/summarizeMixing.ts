import { median, medianOfAll } from './stats.js';
import type { Placement } from './StreamBenchOptions.js';
import type { RunRecord, ScenarioName } from './StreamBenchReport.js';

/** The goal: a mixture streams at least this share of the single-source rate. */
export const MIXING_GOAL = 0.95;

/**
 * The mixture against the single source, per placement (see {@link summarizePaired}), with
 * the samples each source delivered. @internal
 */
export function summarizeMixing(runs: readonly RunRecord[], placements: Placement[]) {
  return summarizePaired(runs, placements, 'service-mixed', MIXING_GOAL).map(
    ({ other, ...row }) => ({
      ...row,
      mixed: {
        ...other.side,
        sourceSamples: other.runs[0]!.sourceSamples!.map((_, i) =>
          median(other.runs.map((r) => r.sourceSamples?.[i] ?? Number.NaN)),
        ),
      },
    }),
  );
}

/**
 * A scenario against the single-source service, per placement: medians of each side's timed
 * runs, and the ratios taken within each round (its samples/s over the service's, and loader
 * CPU per sample), whose medians are what a goal judges, since the machine's load moves
 * between rounds more than between two neighbouring runs. @internal
 */
export function summarizePaired(
  runs: readonly RunRecord[],
  placements: Placement[],
  scenario: ScenarioName,
  goal: number,
) {
  const rows = [];
  for (const placement of placements) {
    const timed = runs.filter((r) => r.placement === placement && r.phase === 'timed');
    const single = timed.filter((r) => r.scenario === 'service');
    const paired = timed.filter((r) => r.scenario === scenario);
    if (paired.length === 0 || single.length === 0) continue;
    const pairs = paired.flatMap((m) => {
      const s = single.find((r) => r.run === m.run);
      return s ? [{ paired: m, single: s }] : [];
    });
    const rateRatios = pairs.map((p) => p.paired.samplesPerSecond / p.single.samplesPerSecond);
    const cpuRatios = pairs.flatMap((p) => {
      const m = loaderCpuPer1000(p.paired);
      const s = loaderCpuPer1000(p.single);
      return m === undefined || s === undefined ? [] : [m / s];
    });
    const ratio = median(rateRatios);
    rows.push({
      placement,
      runs: pairs.length,
      single: side(single),
      other: { side: side(paired), runs: paired },
      /** Median over rounds of the scenario's over the single-source service's samples/s. */
      ratio,
      /** Each round's ratio, in round order. */
      roundRatios: rateRatios,
      /** Median over rounds of the scenario's over the service's loader CPU per sample. */
      loaderCpuRatio: cpuRatios.length === 0 ? undefined : median(cpuRatios),
      /** Each round's loader CPU ratio. */
      roundLoaderCpuRatios: cpuRatios,
      goal,
      meetsGoal: ratio >= goal,
    });
  }
  return rows;
}

/** Loader CPU seconds per 1,000 samples of a run; undefined when its loader was not measured. */
function loaderCpuPer1000(r: RunRecord): number | undefined {
  return r.cpuSeconds.loader === undefined ? undefined : (r.cpuSeconds.loader / r.samples) * 1000;
}

/** Medians of one side's runs. */
function side(these: readonly RunRecord[]) {
  const p50 = medianOfAll(these, (r) => r.waitMs?.p50);
  const p99 = medianOfAll(these, (r) => r.waitMs?.p99);
  const loader = medianOfAll(these, (r) => r.cpuSeconds.loader);
  const per1000 = medianOfAll(these, loaderCpuPer1000);
  return {
    samples: these[0]!.samples,
    samplesPerSecond: median(these.map((r) => r.samplesPerSecond)),
    megabytesPerSecond: median(these.map((r) => r.megabytesPerSecond)),
    ...(loader === undefined ? {} : { loaderCpuSeconds: loader }),
    ...(per1000 === undefined ? {} : { loaderCpuSecondsPer1000Samples: per1000 }),
    ...(p50 === undefined || p99 === undefined ? {} : { waitMs: { p50, p99 } }),
  };
}
