import type { ConsumersReport } from './ConsumersReport.js';

const MIB = 2 ** 20;

/**
 * A `bench consumers` report as Markdown: the memory the held streams cost against the
 * documented window, the normal stream's rate alone and beside them, and keepalive's verdict.
 *
 * @internal
 */
export function formatConsumersReport(r: ConsumersReport): string {
  const held = r.stuckStreams + r.slowStreams;
  const mib = (b: number): string => (b / MIB).toFixed(0);
  const lines = [
    `consumers: ${r.stuckStreams} stuck + ${r.slowStreams} slow streams (batch ${r.batchSize}, prefetch ${r.prefetch}, ${r.sampleBytes / 1000} kB samples), ${r.seconds.toFixed(0)} s`,
    '',
    '| figure | value |',
    '|---|---|',
    `| documented most held per stream (window + the batch being written) | ${mib(r.windowBytesPerStream)} MiB; x ${held} = ${mib(r.windowBytesPerStream * held)} MiB |`,
    `| loader RSS, one normal stream / peak with all held (MiB) | ${mib(r.rssBaselineBytes)} / ${mib(r.rssPeakHeldBytes)} (+${mib(r.rssPeakHeldBytes - r.rssBaselineBytes)}) |`,
    `| loader V8 heap used, likewise (MiB) | ${mib(r.heapBaselineBytes)} / ${mib(r.heapPeakHeldBytes)} (+${mib(r.heapPeakHeldBytes - r.heapBaselineBytes)}) |`,
    `| loader external memory (Buffers), likewise (MiB) | ${mib(r.externalBaselineBytes)} / ${mib(r.externalPeakHeldBytes)} (+${mib(r.externalPeakHeldBytes - r.externalBaselineBytes)}) |`,
    `| normal stream alone / beside them (samples/s) | ${r.normalRateAlone.toFixed(0)} / ${r.normalRateWithHeld.toFixed(0)} (${((100 * r.normalRateWithHeld) / r.normalRateAlone).toFixed(0)}%) |`,
    `| slow consumers' rate (batches/s each, asked 1) | ${r.slowBatchesPerSecond.toFixed(2)} |`,
    `| active streams with all held / after the dead peer | ${r.activeStreamsHeld} / ${r.activeStreamsAfterDead} |`,
    `| dead peer closed by keepalive (${r.keepaliveTimeMs} + ${r.keepaliveTimeoutMs} ms) after | ${r.deadClosedAfterMs < 0 ? 'never' : `${(r.deadClosedAfterMs / 1000).toFixed(1)} s`} |`,
    `| stuck (alive) streams still open at the end | ${r.stuckStillOpen} of ${r.stuckStreams} |`,
    `| loader crashes | ${r.crash ? `1 (${r.crash})` : 0} |`,
  ];
  return `${lines.join('\n')}\n`;
}
