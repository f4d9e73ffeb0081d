import { median, medianOfAll } from '../stream/stats.js';
import type { ScaleRun } from './ScaleBenchReport.js';

const MIB = 2 ** 20;

/** The target of issue E: peak RSS flat within 10% from the smallest split to the largest. */
export const RSS_FLAT_TARGET = 1.1;

/**
 * Medians of the runs of each size, ascending by size; a figure some run lacks (no `/proc`)
 * is left out of its row. @internal
 */
export function summarizeScaleRuns(runs: readonly ScaleRun[]) {
  const sizes = [...new Set(runs.map((r) => r.size))].sort((a, b) => a - b);
  return sizes.map((size) => {
    const these = runs.filter((r) => r.size === size);
    const peak = medianOfAll(these, (r) => r.loaderPeakRssBytes);
    const before = medianOfAll(these, (r) => r.loaderRssBeforeBytes);
    const growth = medianOfAll(these, (r) =>
      r.loaderPeakRssBytes === undefined || r.loaderRssBeforeBytes === undefined
        ? undefined
        : r.loaderPeakRssBytes - r.loaderRssBeforeBytes,
    );
    const cpu = medianOfAll(these, (r) => r.loaderCpuMsPerBatch);
    return {
      size,
      splitSamples: these[0]!.splitSamples,
      runs: these.length,
      ...(peak === undefined ? {} : { loaderPeakRssMiB: peak / MIB }),
      ...(before === undefined ? {} : { loaderRssBeforeMiB: before / MIB }),
      ...(growth === undefined ? {} : { loaderRssGrowthMiB: growth / MIB }),
      ...(cpu === undefined ? {} : { loaderCpuMsPerBatch: cpu }),
      firstBatchMs: median(these.map((r) => r.firstBatchMs)),
      samplesPerSecond: median(these.map((r) => r.samplesPerSecond)),
    };
  });
}

/**
 * The largest size's median peak RSS over the smallest's, against {@link RSS_FLAT_TARGET};
 * undefined with fewer than two sizes or without peak figures. @internal
 */
export function rssVerdict(rows: ReturnType<typeof summarizeScaleRuns>) {
  if (rows.length < 2) return undefined;
  const small = rows[0]!;
  const large = rows[rows.length - 1]!;
  if (small.loaderPeakRssMiB === undefined || large.loaderPeakRssMiB === undefined) {
    return undefined;
  }
  const ratio = large.loaderPeakRssMiB / small.loaderPeakRssMiB;
  return {
    smallest: small.size,
    largest: large.size,
    ratio,
    target: RSS_FLAT_TARGET,
    met: ratio <= RSS_FLAT_TARGET,
  };
}
