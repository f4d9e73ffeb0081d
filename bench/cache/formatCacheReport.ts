import type { CacheEpoch } from './CacheBenchReport.js';
import type { CacheBenchReport } from './runCacheBench.js';

const whole = (x: number): string => Math.round(x).toLocaleString('en-US');
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const percent = (x: number | undefined): string =>
  x === undefined || !Number.isFinite(x) ? '-' : `${(100 * x).toFixed(1)}%`;

/** A leg's epoch as a row: rate, what the loader read, where the cache found the rest. */
function epochRow(cache: string, rttMs: number, e: CacheEpoch, cached: boolean): string {
  const r = e.reads;
  return (
    `| ${cache} | ${rttMs} | ${e.epoch}${e.epoch === 0 ? ' (cold)' : ' (warm)'} | ` +
    `${whole(e.samplesPerSecond)} | ${(e.bytes / 1e6 / e.wallSeconds).toFixed(1)} | ` +
    `${whole(1000 * e.firstBatchSeconds)} | ` +
    `${whole(r.dbQueries)} | ${cached ? whole(r.cacheMisses) : '-'} | ` +
    `${cached ? whole(r.cacheSharedReads) : '-'} | ` +
    `${cached ? `${whole(r.cacheHitsMemory)} / ${whole(r.cacheHitsDisk)}` : '-'} | ` +
    `${percent(e.hitRatio)} |`
  );
}

/**
 * The report as Markdown: the legs epoch by epoch, the sweep, the split twice the cache, and
 * the goals with the ratios this run measured (a missed goal says FAIL; the run still
 * succeeds: these are figures). @internal
 */
export function formatCacheReport(report: CacheBenchReport): string {
  const { settings, sweep, oversize } = report;
  const groupReads = report.legs
    .flatMap((l) => l.epochs.flatMap((e) => e.streamEnds.map((s) => s.groupReads)))
    .find((g) => g !== undefined);
  const lines = [
    `bench cache: split \`all\` of ${whole(report.dataset.samples)} random samples of ` +
      `${whole(settings.sampleBytes)} bytes (${(report.dataset.totalBytes / 1e6).toFixed(1)} MB), ` +
      `batches of ${settings.batchSize}, out of order, one stream per epoch, ` +
      `${groupReads === undefined ? '' : `reads grouped up to ${groupReads} samples per query, `}` +
      `every database connection through toxiproxy with an added round trip of ` +
      `${settings.rttsMs.join(' or ')} ms (half each way). Each leg is a fresh loader; ` +
      'samples/s from the call to the last batch, the set-up of the stream (first batch ms) included; ' +
      `"cache": memory tier ${mib(settings.cache.memoryBytes)} MiB + disk tier bound ` +
      `${mib(settings.cache.diskBytes)} MiB in a fresh folder of ${settings.cacheFolder}. ` +
      "Database queries and samples read are the loader's counters (read histogram count, " +
      'cache misses) before and after each epoch.',
    '',
    '| cache | RTT ms | epoch | samples/s | MB/s | first batch ms | DB queries | samples read from DB | shared reads | hits memory / disk | hit ratio |',
    '|---|--:|---|--:|--:|--:|--:|--:|--:|---|--:|',
    ...report.legs.flatMap((l) =>
      l.epochs.map((e) => epochRow(l.cached ? 'yes' : 'no', l.rttMs, e, l.cached)),
    ),
    '',
    '| sweep | RTT ms | samples/s, all jobs (per job) | samples read from DB / split | DB queries / split | shared reads | hits memory / disk |',
    '|---|--:|---|--:|--:|--:|---|',
    `| ${sweep.jobs} jobs, seeds apart, 1 epoch each | ${sweep.rttMs} | ` +
      `${whole(sweep.epoch.samplesPerSecond)} (${sweep.jobSamplesPerSecond.map(whole).join(', ')}) | ` +
      `${sweep.dbSamplesPerSplitSample.toFixed(3)}x | ${sweep.dbQueriesPerSplitSample.toFixed(3)}x | ` +
      `${whole(sweep.epoch.reads.cacheSharedReads)} | ` +
      `${whole(sweep.epoch.reads.cacheHitsMemory)} / ${whole(sweep.epoch.reads.cacheHitsDisk)} |`,
    '',
    '| split twice the cache | RTT ms | cold samples/s | warm samples/s | warm hit ratio | disk evictions | writes dropped | data.mdb MiB (on disk) | data.mdb / bound |',
    '|---|--:|--:|--:|--:|--:|--:|---|--:|',
    `| ${whole(oversize.samples)} samples, ${mib(oversize.splitBytes)} MiB; no memory tier, ` +
      `disk bound ${mib(oversize.diskBoundBytes)} MiB | ${oversize.rttMs} | ` +
      `${whole(oversize.epochs[0]?.samplesPerSecond ?? Number.NaN)} | ` +
      `${whole(oversize.warmSamplesPerSecond)} | ${percent(oversize.warmHitRatio)} | ` +
      `${whole(oversize.epochs.reduce((s, e) => s + e.reads.evictionsDisk, 0))} | ` +
      `${whole(oversize.epochs.reduce((s, e) => s + e.reads.diskWritesDropped, 0))} | ` +
      `${mib(Math.max(...oversize.dataFileBytes))} (${mib(Math.max(...oversize.dataFileAllocatedBytes))}) | ` +
      `${oversize.dataFileOverBound.toFixed(2)} |`,
    '',
    '| goal | target | measured | result |',
    '|---|---|---|---|',
    ...report.goals.map(
      (g) => `| ${g.goal} | ${g.target} | ${g.measured} | ${g.met ? 'PASS' : 'FAIL'} |`,
    ),
    '',
  ];
  for (const note of report.notes) lines.push(`note: ${note}`);
  lines.push(`figures: ${report.jsonPath}`, '');
  return lines.join('\n');
}
