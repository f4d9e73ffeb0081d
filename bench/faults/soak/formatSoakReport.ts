import type { SoakReport } from './SoakReport.js';

const MIB = 2 ** 20;

/**
 * A `bench soak` report as Markdown: throughput, RSS and file descriptors after warm-up and
 * at the end, the loader's event-loop delay.
 *
 * @internal
 */
export function formatSoakReport(r: SoakReport): string {
  const mib = (b: number): string => (b / MIB).toFixed(0);
  const lines = [
    `soak: ${r.streams} streams for ${r.seconds.toFixed(0)} s (warm-up ${r.warmupSeconds} s), ${r.processes} loader processes`,
    '',
    '| figure | value |',
    '|---|---|',
    `| samples delivered (samples/s) | ${r.samplesDelivered} (${r.samplesPerSecond.toFixed(0)}) |`,
    `| stream errors | ${r.streamErrors} |`,
    `| RSS after warm-up / end / peak (MiB, all processes) | ${mib(r.rssAfterWarmupBytes)} / ${mib(r.rssEndBytes)} / ${mib(r.rssPeakBytes)} |`,
    `| RSS growth after warm-up | ${r.rssGrowthPercent.toFixed(2)}% |`,
    `| open fds after warm-up / end / max | ${r.fdsAfterWarmup} / ${r.fdsEnd} / ${r.fdsMax} |`,
    `| event-loop delay p99 / max (worst scrape after warm-up) | ${(r.eventLoopP99Seconds * 1000).toFixed(0)} ms / ${(r.eventLoopMaxSeconds * 1000).toFixed(0)} ms |`,
    `| /metrics scrapes that failed (a worker too busy to answer its primary) | ${r.failedScrapes} |`,
    `| loader crashes | ${r.crash ? `1 (${r.crash})` : 0} |`,
  ];
  return `${lines.join('\n')}\n`;
}
