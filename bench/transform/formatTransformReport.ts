import {
  CPU_EFFICIENCY_GOAL,
  DATASET_PYTHON_MS_GOAL,
  LATENCY_RETENTION_GOAL,
  MASKS_OVER_IMAGE_GOAL,
  NATIVE_OVER_SHARP_GOAL,
  type TransformLegSummary,
} from './summarizeTransformRuns.js';
import type { TransformBenchReport } from './runTransformBench.js';

/** What the formatter reads of a report. */
export type TransformReportView = Pick<
  TransformBenchReport,
  'summary' | 'goals' | 'settings' | 'dataset' | 'seconds' | 'notes' | 'jsonPath'
> & { environment: { cores: number; loadAverage: number[] } };

/**
 * The Markdown of `bench transform`: a heading line with the settings, one row per leg (medians
 * of the runs, every figure with its unit in the header), then the goal ratios with the issue's
 * goals beside them. Figures are stated, never judged by this tool's exit code.
 */
export function formatTransformReport(report: TransformReportView): string {
  const s = report.settings;
  const d = report.dataset;
  const lines = [
    `bench transform: ${d.name}, ${d.samples} images of ${(d.meanBytes / 1e3).toFixed(1)} kB ` +
      `(mean, stored), RandomResizedCrop ${s.size} + horizontal flip ${s.flip}, batches of ` +
      `${s.batchSize}, ${s.epochs} epoch(s) per run, DataLoader workers ${s.workers}; ` +
      `medians of ${s.runs} run(s) per leg, legs interleaved; ${report.seconds.toFixed(0)} s, ` +
      `${report.environment.cores} cores, load average ` +
      `${report.environment.loadAverage.map((x) => x.toFixed(2)).join(' ')} at the start`,
    '',
    '| leg | images/s | CPU ms/image (loader + Python) | loader CPU ms/image | Python CPU ms/image | database CPU ms/image | images per CPU s | response kB/image |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    ...report.summary.map(row),
    '',
    'CPU per image: the loader process (/proc) and the Python process with its DataLoader ' +
      'workers; the database is shown apart (every leg reads the same rows; the whole node, so ' +
      "other users' queries too). images per CPU s = " +
      '1000 / (CPU ms/image). Response kB/image: data, ids and resume tokens the client ' +
      'received; * the stored JPEG size (the DataLoader workers receive the bytes).',
    '',
    'Goals (issues 14, 24, 38 and 41):',
    goalLine(
      'loader CPU per image, sharp / native (raw legs; the transform alone is the larger ratio)',
      report.goals.nativeLoaderCpuVsSharp,
      NATIVE_OVER_SHARP_GOAL,
      'x',
    ),
    goalLine(
      'server raw images per CPU s / Python PIL',
      report.goals.cpuEfficiencyVsPil,
      CPU_EFFICIENCY_GOAL,
      'x',
    ),
    goalLine(
      'server raw images per CPU s / Python v2',
      report.goals.cpuEfficiencyVsV2,
      CPU_EFFICIENCY_GOAL,
      'x',
    ),
    goalLine(
      `server raw images/s at ${s.rttMs} ms / at 0 ms (both via toxiproxy)`,
      report.goals.latencyRetention,
      LATENCY_RETENTION_GOAL,
      '',
    ),
    `- response bytes per image, raw / JPEG q${s.jpegQuality}: ` +
      (report.goals.rawOverJpegBytes === null
        ? 'n/a'
        : `${report.goals.rawOverJpegBytes.toFixed(2)}x`),
    '- Python (trainer-side) CPU per image, PIL / server raw: ' +
      `${times(report.goals.trainerCpuPilOverRaw)}, v2 / server raw: ` +
      `${times(report.goals.trainerCpuV2OverRaw)} (no goal: the trainer's share alone)`,
    '- loader CPU per image + mask pair / per image alone (masks leg / server raw, issue 38): ' +
      (report.goals.masksLoaderCpuVsImage === null
        ? `n/a (a leg is missing), goal <= ${MASKS_OVER_IMAGE_GOAL}x`
        : `${report.goals.masksLoaderCpuVsImage.toFixed(2)}x (goal <= ${MASKS_OVER_IMAGE_GOAL}x: ` +
          `${report.goals.masksLoaderCpuVsImage <= MASKS_OVER_IMAGE_GOAL ? 'met' : 'not met'})`),
    ...(['bytes', 'raw', 'bytesMain', 'rawMain'] as const).map((kind) => {
      const ms = report.goals.datasetPythonMsPerSample?.[kind] ?? null;
      const leg = {
        bytes: 'dataset-bytes',
        raw: 'dataset-raw',
        bytesMain: 'dataset-bytes-main',
        rawMain: 'dataset-raw-main',
      }[kind];
      const what = kind.startsWith('raw') ? 'raw tensors' : 'stored bytes';
      const where = kind.endsWith('Main') ? 'num_workers=0' : `${s.workers} DataLoader workers`;
      return (
        `- LoaderDataset trainer side, Python CPU per sample, ${what}, ${where} (${leg}, issue 41): ` +
        (ms === null
          ? `n/a (leg not run), goal <= ${DATASET_PYTHON_MS_GOAL} ms`
          : `${ms.toFixed(3)} ms (goal <= ${DATASET_PYTHON_MS_GOAL} ms: ` +
            `${ms <= DATASET_PYTHON_MS_GOAL ? 'met' : 'not met'})`)
      );
    }),
    ...(report.notes.length > 0 ? ['', ...report.notes.map((n) => `note: ${n}`)] : []),
    '',
    `figures: ${report.jsonPath}`,
    '',
  ];
  return lines.join('\n');
}

function row(r: TransformLegSummary): string {
  const ms = (v: number | null): string => (v === null ? 'n/a' : v.toFixed(2));
  const [lo, hi] = r.imagesPerSecondRange;
  const spread = r.runs > 1 ? ` (${lo.toFixed(0)}-${hi.toFixed(0)})` : '';
  return (
    `| ${r.leg} (${r.label}) | ${r.imagesPerSecond.toFixed(0)}${spread} | ` +
    `${ms(r.cpuMsPerImage.total)} | ${ms(r.cpuMsPerImage.loader)} | ${ms(r.cpuMsPerImage.python)} | ` +
    `${ms(r.cpuMsPerImage.database)} | ${r.imagesPerCpuSecond.toFixed(0)} | ` +
    `${(r.wireBytesPerImage / 1e3).toFixed(1)}${r.wireBytesCounted ? '' : '*'} |`
  );
}

function times(value: number | null): string {
  return value === null ? 'n/a' : `${value.toFixed(1)}x`;
}

function goalLine(what: string, value: number | null, goal: number, unit: string): string {
  if (value === null) return `- ${what}: n/a (a leg is missing), goal >= ${goal}${unit}`;
  const verdict = value >= goal ? 'met' : 'not met';
  return `- ${what}: ${value.toFixed(2)}${unit} (goal >= ${goal}${unit}: ${verdict})`;
}
