import type { LatencySummaryRow } from './summarizeLatencyRuns.js';

const WIDTH = 640;
const HEIGHT = 400;
const MARGIN = { left: 70, right: 200, top: 40, bottom: 50 };
const COLORS = { B: '#1f77b4', C: '#d62728' } as const;

/**
 * A line chart of samples/s versus injected round trip for B and C on the main route, with
 * the runs with the congested route added as hollow markers, as a standalone SVG document
 * (written by hand: a few lines do not need a charting library). The pinned placement's
 * lines are solid, the unpinned ones dashed. @internal
 */
export function latencyChartSvg(rows: readonly LatencySummaryRow[], title: string): string {
  const rtts = rows.map((r) => r.rttMs);
  const maxRtt = Math.max(1, ...rtts);
  const yTicks = niceTicks(Math.max(1, ...rows.map((r) => r.samplesPerSecond)));
  const yMax = yTicks[yTicks.length - 1]!;
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (rtt: number): number => MARGIN.left + (rtt / maxRtt) * plotW;
  const y = (rate: number): number => MARGIN.top + plotH - (rate / yMax) * plotH;
  const f = (n: number): string => n.toFixed(1);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" ` +
      `viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${MARGIN.left}" y="22" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  for (const t of yTicks) {
    out.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${f(y(t))}" y2="${f(y(t))}" stroke="#e0e0e0"/>`,
      `<text x="${MARGIN.left - 6}" y="${f(y(t) + 4)}" text-anchor="end">${t}</text>`,
    );
  }
  for (const rtt of [...new Set(rtts)]) {
    out.push(
      `<line x1="${f(x(rtt))}" x2="${f(x(rtt))}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH + 5}" stroke="black"/>`,
      `<text x="${f(x(rtt))}" y="${MARGIN.top + plotH + 18}" text-anchor="middle">${rtt}</text>`,
    );
  }
  out.push(
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + plotW}" y1="${MARGIN.top + plotH}" y2="${MARGIN.top + plotH}" stroke="black"/>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${MARGIN.top + plotH}" stroke="black"/>`,
    `<text x="${MARGIN.left + plotW / 2}" y="${HEIGHT - 12}" text-anchor="middle">injected round trip (ms)</text>`,
    `<text transform="translate(18 ${MARGIN.top + plotH / 2}) rotate(-90)" text-anchor="middle">samples/s</text>`,
  );
  let legendY = MARGIN.top + 10;
  const placements = [...new Set(rows.map((r) => r.placement))];
  for (const placement of placements) {
    const dash = placement === 'pinned' ? '' : ' stroke-dasharray="6 4"';
    for (const scenario of ['B', 'C'] as const) {
      const color = COLORS[scenario];
      const these = rows.filter((r) => r.scenario === scenario && r.placement === placement);
      const main = these.filter((r) => r.routes === 'main').sort((a, b) => a.rttMs - b.rttMs);
      if (main.length > 0) {
        const points = main.map((r) => `${f(x(r.rttMs))},${f(y(r.samplesPerSecond))}`).join(' ');
        out.push(
          `<polyline points="${points}" fill="none" stroke="${color}" stroke-width="2"${dash}/>`,
        );
        for (const r of main) {
          out.push(
            `<circle cx="${f(x(r.rttMs))}" cy="${f(y(r.samplesPerSecond))}" r="4" fill="${color}"/>`,
          );
        }
      }
      for (const r of these.filter((r) => r.routes !== 'main')) {
        out.push(
          `<circle cx="${f(x(r.rttMs))}" cy="${f(y(r.samplesPerSecond))}" r="6" fill="white" stroke="${color}" stroke-width="2"/>`,
        );
      }
      const lx = MARGIN.left + plotW + 16;
      const label = `${scenario === 'B' ? 'B in-order' : 'C out-of-order'}, ${placement}`;
      out.push(
        `<line x1="${lx}" x2="${lx + 20}" y1="${legendY}" y2="${legendY}" stroke="${color}" stroke-width="2"${dash}/>`,
        `<circle cx="${lx + 10}" cy="${legendY}" r="4" fill="${color}"/>`,
        `<text x="${lx + 26}" y="${legendY + 4}">${label}</text>`,
        `<circle cx="${lx + 10}" cy="${legendY + 20}" r="6" fill="white" stroke="${color}" stroke-width="2"/>`,
        `<text x="${lx + 26}" y="${legendY + 24}">+ congested route</text>`,
      );
      legendY += 50;
    }
  }
  out.push('</svg>', '');
  return out.join('\n');
}

/** Round axis ticks from 0 to at least `max`: steps of 1, 2 or 5 times a power of ten. */
function niceTicks(max: number): number[] {
  const rough = max / 5;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? 10 * power;
  const ticks: number[] = [];
  for (let t = 0; t < max + step; t += step) ticks.push(Number(t.toPrecision(12)));
  return ticks;
}

function escapeXml(text: string): string {
  return text.replace(
    /[<>&"]/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c] ?? c,
  );
}
