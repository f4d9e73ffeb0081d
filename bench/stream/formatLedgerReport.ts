import { LEDGER_TABLES, type LedgerTableSize } from './benchLedger.js';
import type { StreamBenchReport } from './runStreamBench.js';

const num = (v: number | undefined, digits = 0): string =>
  v === undefined || !Number.isFinite(v)
    ? 'n/a'
    : v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** ImageNet-1k's training samples, for the size of a 90-epoch job. */
const IMAGENET_1K_SAMPLES = 1_281_167;

/**
 * `bench stream --ledger` as Markdown: the streams naming a job against the same streams
 * without, and the ledger's bytes per sample by table (empty when the run named no job).
 */
export function formatLedgerReport(report: StreamBenchReport): string {
  const ledger = report.ledger;
  if (!ledger) return '';
  const { size } = ledger;
  const rounds = (xs: number[]): string => xs.map((x) => num(x, 2)).join(', ');
  const lines = [
    `### Training ledger: streams naming a job against the same streams without ` +
      `(${report.settings.payload} payload, ${num(report.settings.samples)} samples per stream)`,
    '',
    'Both out-of-order with the default prefetch, through the same loader, next to each other in ' +
      "every round (alternating which goes first); each round's job stream names a new job, so " +
      `the loader writes a ledger row per batch and an index row per sample before sending it. ` +
      `Medians of ${report.settings.runs} round(s); ratios within a round, median over rounds ` +
      `(each round's in brackets), lowest and highest; goal: samples/s ≥ ${num(ledger.goal, 2)}×.`,
    '',
    '| placement | stream | samples/s | × (per round) | × lowest / highest | ' +
      'loader CPU s per 1,000 samples | × (per round) | goal |',
    '|---|---|--:|--:|--:|--:|--:|---|',
  ];
  for (const row of ledger.rows) {
    lines.push(
      `| ${row.placement} | no job | ${num(row.single.samplesPerSecond)} | 1.00 | - | ` +
        `${num(row.single.loaderCpuSecondsPer1000Samples, 3)} | 1.00 | - |`,
      `| ${row.placement} | job named | ${num(row.job.samplesPerSecond)} | ` +
        `${num(row.ratio, 2)} (${rounds(row.roundRatios)}) | ` +
        `${num(row.minRatio, 2)} / ${num(row.maxRatio, 2)} | ` +
        `${num(row.job.loaderCpuSecondsPer1000Samples, 3)} | ` +
        `${num(row.loaderCpuRatio, 2)} (${rounds(row.roundLoaderCpuRatios)}) | ` +
        `${row.meetsGoal ? 'met' : 'missed'} (≥ ${num(row.goal, 2)}) |`,
    );
  }
  const disk = size.diskBytesPerSample !== undefined;
  const perSample = (bytes: number | undefined): string => num((bytes ?? NaN) / size.samples, 1);
  lines.push(
    '',
    `Ledger size: keyspace ${size.keyspace} after the runs, ${num(size.samples)} samples ` +
      'recorded (the job streams, their warm-ups and a warm-up per loader, one epoch each). On disk: live SSTable ' +
      'bytes after `nodetool flush` (compressed, every component, one replica); logical: the ' +
      'values of every row as CQL returns them. ' +
      (disk ? '' : `${size.diskNote ?? ''}. `) +
      `Each job here is one epoch of ${num(report.settings.samples)} samples spread over the ` +
      "index's partitions, and small SSTables carry fixed costs; a long job's partitions hold " +
      'many epochs, so per-partition and per-file costs weigh less than here.',
    '',
    '| table | rows | on-disk bytes | on-disk bytes per sample | logical bytes per sample |',
    '|---|--:|--:|--:|--:|',
  );
  for (const table of LEDGER_TABLES) {
    const t = size.tables[table];
    lines.push(
      `| ${table} | ${num(t.rows)} | ${num(t.diskBytes)} | ${perSample(t.diskBytes)} | ` +
        `${perSample(t.logicalBytes)} |`,
    );
  }
  const total = (pick: (t: LedgerTableSize) => number | undefined): number =>
    LEDGER_TABLES.reduce((sum, table) => sum + (pick(size.tables[table]) ?? NaN), 0);
  lines.push(
    `| total | - | ${num(total((t) => t.diskBytes))} | ` +
      `${num(size.diskBytesPerSample?.total, 1)} | ${num(size.logicalBytesPerSample.total, 1)} |`,
  );
  const perEpoch = disk ? size.diskBytesPerSample!.total : size.logicalBytesPerSample.total;
  lines.push(
    '',
    `At ${num(perEpoch, 1)} bytes per sample per epoch (${disk ? 'on disk' : 'logical'}), ` +
      `ImageNet-1k (${num(IMAGENET_1K_SAMPLES)} samples) for 90 epochs is ` +
      `${num((perEpoch * IMAGENET_1K_SAMPLES * 90) / 1e9, 1)} GB per replica.`,
  );
  return `${lines.join('\n')}\n`;
}
