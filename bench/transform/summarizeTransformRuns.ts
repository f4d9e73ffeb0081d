import { median } from '../stream/stats.js';
import type { TransformGoals, TransformLegRun } from './TransformBenchReport.js';
import { legLabel, type TransformLegName, type TransformLegSpec } from './transformLegs.js';

/** Goal of the issue: server-side images per CPU second over the Python path's. */
export const CPU_EFFICIENCY_GOAL = 2;
/** Goal of the native path's CPU per image against sharp's (issue 24). @internal */
export const NATIVE_OVER_SHARP_GOAL = 3;
/** Goal of the issue: share of the 0 ms rate kept at the injected round trip. */
export const LATENCY_RETENTION_GOAL = 0.9;
/** Goal of issue 38: the loader's CPU per image + mask pair over per image, at most. */
export const MASKS_OVER_IMAGE_GOAL = 1.3;
/** Issue 41's goal 3: the trainer side of LoaderDataset, Python CPU ms per sample at most. */
export const DATASET_PYTHON_MS_GOAL = 0.3;

/**
 * Medians of each leg's runs, in the order of `legs` (legs without runs are left out), and
 * the goal ratios from those medians. CPU per image counts the loader and the Python tree
 * (what the leg costs); the database's is reported beside it, not in the total, as every leg
 * reads the same rows. @internal
 */
export function summarizeTransformRuns(
  legs: readonly TransformLegSpec[],
  runs: readonly TransformLegRun[],
) {
  const summary = legs.flatMap((leg) => {
    const mine = runs.filter((r) => r.leg === leg.name);
    if (mine.length === 0) return [];
    const perImage = (f: (r: TransformLegRun) => number | undefined): number | null => {
      const values = mine.map(f);
      if (values.some((v) => v === undefined)) return null;
      return median(values.map((v, i) => (1000 * v!) / mine[i]!.images));
    };
    const rates = mine.map((r) => r.images / r.wallSeconds);
    const loader = perImage((r) => r.cpuSeconds.loader);
    const python = perImage((r) => r.cpuSeconds.python)!;
    const total = perImage((r) => (r.cpuSeconds.loader ?? 0) + r.cpuSeconds.python)!;
    return {
      leg: leg.name,
      label: legLabel(leg),
      runs: mine.length,
      images: mine[0]!.images,
      imagesPerSecond: median(rates),
      imagesPerSecondRange: [Math.min(...rates), Math.max(...rates)] as [number, number],
      cpuMsPerImage: { total, loader, python, database: perImage((r) => r.cpuSeconds.database) },
      imagesPerCpuSecond: total > 0 ? 1000 / total : Number.POSITIVE_INFINITY,
      wireBytesPerImage: median(mine.map((r) => r.wireBytesPerImage)),
      wireBytesCounted: mine.every((r) => r.wireBytesCounted),
    };
  });
  const of = (name: TransformLegName) => summary.find((s) => s.leg === name);
  const ratio = (a: number | undefined, b: number | undefined): number | null =>
    a === undefined || b === undefined || b === 0 ? null : a / b;
  const raw = of('server-raw');
  const goals: TransformGoals = {
    nativeLoaderCpuVsSharp: ratio(
      of('server-raw-sharp')?.cpuMsPerImage.loader ?? undefined,
      raw?.cpuMsPerImage.loader ?? undefined,
    ),
    cpuEfficiencyVsPil: ratio(raw?.imagesPerCpuSecond, of('python-pil')?.imagesPerCpuSecond),
    cpuEfficiencyVsV2: ratio(raw?.imagesPerCpuSecond, of('python-v2')?.imagesPerCpuSecond),
    latencyRetention: ratio(
      of('server-raw-proxy-rtt')?.imagesPerSecond,
      of('server-raw-proxy-0ms')?.imagesPerSecond,
    ),
    rawOverJpegBytes: ratio(raw?.wireBytesPerImage, of('server-jpeg')?.wireBytesPerImage),
    trainerCpuPilOverRaw: ratio(of('python-pil')?.cpuMsPerImage.python, raw?.cpuMsPerImage.python),
    trainerCpuV2OverRaw: ratio(of('python-v2')?.cpuMsPerImage.python, raw?.cpuMsPerImage.python),
    masksLoaderCpuVsImage: ratio(
      of('server-raw-masks')?.cpuMsPerImage.loader ?? undefined,
      raw?.cpuMsPerImage.loader ?? undefined,
    ),
    datasetPythonMsPerSample: {
      bytes: of('dataset-bytes')?.cpuMsPerImage.python ?? null,
      raw: of('dataset-raw')?.cpuMsPerImage.python ?? null,
      bytesMain: of('dataset-bytes-main')?.cpuMsPerImage.python ?? null,
      rawMain: of('dataset-raw-main')?.cpuMsPerImage.python ?? null,
    },
  };
  return { summary, goals };
}

/** A leg's medians over its runs. */
export type TransformLegSummary = ReturnType<typeof summarizeTransformRuns>['summary'][number];
