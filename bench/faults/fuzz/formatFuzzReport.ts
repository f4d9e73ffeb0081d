import type { FuzzReport } from './FuzzReport.js';

const MIB = 2 ** 20;

/**
 * A `bench fuzz` report as Markdown: one row per kind of generated request (sent, statuses
 * seen, wrong answers), then how the loader held up (crashes, INTERNAL streams, hostile
 * connections, RSS and file descriptors before and after, a normal epoch while and after).
 *
 * @internal
 */
export function formatFuzzReport(r: FuzzReport): string {
  const wrongByKind = new Map<string, number>();
  for (const w of r.wrong) wrongByKind.set(w.kind, (wrongByKind.get(w.kind) ?? 0) + 1);
  const rows = Object.entries(r.byKind)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, k]) => {
      const statuses = Object.entries(k.statuses)
        .sort(([, a], [, b]) => b - a)
        .map(([s, n]) => `${s} ${n}`)
        .join(', ');
      return `| ${kind} | ${k.sent} | ${statuses} | ${wrongByKind.get(kind) ?? 0} |`;
    });
  const c = r.connections;
  const lines = [
    `fuzz: ${r.requests} generated requests (fast-check seed ${r.seed}), ${r.seconds.toFixed(0)} s`,
    '',
    '| kind | sent | statuses | wrong |',
    '|---|---|---|---|',
    ...rows,
    '',
    '| figure | value |',
    '|---|---|',
    `| wrong statuses | ${r.wrongCount} |`,
    `| loader crashes (process or worker) | ${r.crash ? `1 (${r.crash})` : 0} (worker deaths ${r.workerDeaths}) |`,
    `| streams ended INTERNAL/UNKNOWN | ${r.internalErrors} |`,
    `| random-bytes connections (closed by the loader) | ${c.randomBytes} (${c.randomBytesClosedByServer}) |`,
    `| half-open connections + partial calls held ${(c.heldMs / 1000).toFixed(0)} s (closed by the loader) | ${c.halfOpen} + ${c.partialCalls} (${c.heldClosedByServer}) |`,
    `| normal epoch while held / after (of ${r.datasetSamples}) | ${r.normalSamplesWhileHeld} / ${r.normalSamplesAfter} |`,
    `| loader processes at the end, /healthz | ${r.processes}, HTTP ${r.healthzAfter} |`,
    `| RSS before / peak / after (MiB, all processes) | ${(r.rssBeforeBytes / MIB).toFixed(0)} / ${(r.rssPeakBytes / MIB).toFixed(0)} / ${(r.rssAfterBytes / MIB).toFixed(0)} |`,
    `| open fds before / after | ${r.fdsBefore} / ${r.fdsAfter} |`,
  ];
  if (r.wrong.length > 0) {
    lines.push('', 'wrong answers (the first of each kind):');
    const shown = new Set<string>();
    for (const w of r.wrong) {
      if (shown.has(w.kind)) continue;
      shown.add(w.kind);
      lines.push(
        `- ${w.kind}: ${w.status} (expected ${w.expected.join('|')}): ${w.details} [${w.note}]`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
