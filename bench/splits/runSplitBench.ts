import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type cassandra from 'cassandra-driver';
import { prepareSplitBenchData, type SplitBenchShape } from './prepareSplitBenchData.js';

/** Figures of one split creation, as the child measured them. */
export interface SplitBenchRun {
  seconds: number;
  scanSeconds: number;
  assignSeconds: number;
  peakRssBytes: number;
  rows: number;
  groups: number;
  version: number;
  worstDeviation: number;
  parts: Array<{ name: string; size: number; classes: number }>;
}

/**
 * The split benchmark: an ImageNet-sized synthetic metadata set (prepared once), split 7:2:1,
 * balanced, grouped, `runs` times, each in a fresh child process so its peak memory is its own.
 */
export async function runSplitBench(
  client: cassandra.Client,
  options: { dataset: string; shape: SplitBenchShape; runs: number; log: (line: string) => void },
): Promise<{ prepared: 'reused' | 'written'; runs: SplitBenchRun[] }> {
  let lastReport = 0;
  const { reused } = await prepareSplitBenchData(
    client,
    options.dataset,
    options.shape,
    (done, total) => {
      if (Date.now() - lastReport > 5000 || done === total) {
        lastReport = Date.now();
        options.log(`writing synthetic metadata: ${done}/${total} rows`);
      }
    },
  );
  const self = fileURLToPath(import.meta.url);
  // From a checkout the bench runs as TypeScript through tsx; from a build, as JavaScript.
  const child = path.join(path.dirname(self), `splitBenchChild${path.extname(self)}`);
  const loader = child.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const runs: SplitBenchRun[] = [];
  for (let i = 0; i < options.runs; i++) {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        ...loader,
        child,
        JSON.stringify({ dataset: options.dataset, name: 'bench', seed: String(i + 1) }),
      ],
      { maxBuffer: 1 << 20, env: process.env },
    );
    const run = JSON.parse(stdout.trim().split('\n').at(-1)!) as SplitBenchRun;
    options.log(
      `run ${i + 1}: ${run.seconds.toFixed(1)} s (scan ${run.scanSeconds.toFixed(1)} s, assign ` +
        `${run.assignSeconds.toFixed(1)} s), peak RSS ${(run.peakRssBytes / 2 ** 20).toFixed(0)} MiB, ` +
        `worst deviation ${(100 * run.worstDeviation).toFixed(2)}%`,
    );
    runs.push(run);
  }
  return { prepared: reused ? 'reused' : 'written', runs };
}

/** The split benchmark's Markdown: medians of the runs, the worst deviation, the parts. */
export function formatSplitBench(runs: readonly SplitBenchRun[]): string {
  const median = (f: (r: SplitBenchRun) => number): number =>
    runs.map(f).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
  const first = runs[0]!;
  return [
    `| rows | groups | wall s (median of ${runs.length}) | scan s | assign s | peak RSS MiB | worst deviation |`,
    '|---|---|---|---|---|---|---|',
    `| ${first.rows} | ${first.groups} | ${median((r) => r.seconds).toFixed(1)} | ` +
      `${median((r) => r.scanSeconds).toFixed(1)} | ${median((r) => r.assignSeconds).toFixed(1)} | ` +
      `${(median((r) => r.peakRssBytes) / 2 ** 20).toFixed(0)} | ` +
      `${(100 * Math.max(...runs.map((r) => r.worstDeviation))).toFixed(2)}% |`,
    '',
    `parts: ${first.parts.map((p) => `${p.name} ${p.size} (${p.classes} classes)`).join(', ')}`,
    '',
  ].join('\n');
}
