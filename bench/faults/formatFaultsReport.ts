import type { FaultsBenchReport } from './FaultsBenchReport.js';

/**
 * The table of `bench faults`, Markdown: one row per scenario with the faults injected, the
 * samples delivered and the checker's verdict (lost, duplicated, foreign), the longest wait of
 * a trainer between two batches, the reconnects, and the loader exits nobody caused.
 *
 * @internal
 */
export function formatFaultsReport(report: FaultsBenchReport): string {
  const lines = [
    '| scenario | faults injected | samples delivered | lost | duplicated | foreign | longest stall | reconnects | loader crashes |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const total = { faults: 0, delivered: 0, lost: 0, duplicated: 0, foreign: 0, crashes: 0 };
  for (const s of report.scenarios) {
    const v = s.verdict;
    total.faults += s.faultCount;
    total.delivered += v.delivered;
    total.lost += v.lost;
    total.duplicated += v.duplicated;
    total.foreign += v.foreign;
    total.crashes += s.loaderCrashes;
    const failed = v.failedRanks > 0 ? ` (${v.failedRanks} ranks gave up)` : '';
    lines.push(
      `| ${s.scenario} | ${s.faultCount} | ${v.delivered} | ${v.lost}${failed} | ${v.duplicated} | ` +
        `${v.foreign} | ${(v.longestStallMs / 1000).toFixed(2)} s | ${v.reconnects} | ${s.loaderCrashes} |`,
    );
  }
  lines.push(
    `| **all** | **${total.faults}** | **${total.delivered}** | **${total.lost}** | ` +
      `**${total.duplicated}** | **${total.foreign}** | | | **${total.crashes}** |`,
  );
  for (const s of report.skipped) lines.push('', `skipped ${s.scenario}: ${s.reason}`);
  return `${lines.join('\n')}\n`;
}
