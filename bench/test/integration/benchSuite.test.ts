import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchSuiteReport } from '../../suite/BenchSuiteReport.js';
import { isProcessAlive } from '../../../src/devdb/index.js';
import { benchHarness } from './benchHarness.js';

const bench = benchHarness('suite');

describe('bench suite --quick', () => {
  // The suite's quick mode runs in the test command so that it never rots. Figures are only
  // reported: speed is never asserted here; what is asserted is that every part ran, delivered
  // what it should, checked the targets and left its results and no process behind.
  it(
    'runs every scenario, writes the results folder and checks the targets',
    { timeout: 600_000 },
    async () => {
      const outDir = await bench.outDir();
      const result = await bench.run('suite', [], { dataset: false });
      expect(result.stdout).toMatch(/^\| target \| goal \| pinned \| unpinned \| met \| from \|$/m);
      expect(result.stdout).toContain(`results: ${outDir}`);

      const report = JSON.parse(
        await readFile(path.join(outDir, 'suite.json'), 'utf8'),
      ) as BenchSuiteReport;
      expect(report.quick).toBe(true);
      expect(report.command).toBe('npm run bench -- suite --quick');

      // A-C: the tight loop and both service scenarios on the ImageNet-size photo payload.
      const stream = report.stream.imagenet!;
      expect(stream.dataset.meanBytes).toBeGreaterThan(50_000);
      expect(stream.summary.map((r) => r.scenario).sort()).toEqual([
        'service',
        'service-in-order-p2',
        'tight-loop',
      ]);
      for (const run of stream.runs.filter((r) => r.phase === 'timed')) {
        expect(run.samples).toBe(stream.dataset.samples);
      }
      // D: B and C at 0 and 20 ms and with the congested route, full speed and paced.
      const latency = report.latency!;
      expect(latency.summary).toHaveLength(6);
      for (const row of latency.summary) expect(row.trainer).toBeDefined();
      for (const run of latency.runs) expect(run.samples).toBe(latency.dataset.samples);
      // F: every rank's samples exactly once per epoch, for each number of ranks.
      const concurrency = report.concurrency!;
      expect(concurrency.summary.map((r) => r.streams)).toEqual([1, 4]);
      for (const row of concurrency.summary) expect(row.exactlyOnce).toBe(true);
      // E: each split streamed whole.
      const scale = report.scale!;
      expect(scale.summary.map((r) => r.size)).toEqual([1_000, 10_000]);
      for (const run of scale.runs) expect(run.samples).toBe(run.size);
      // G: both legs carried the bytes.
      const ceiling = report.ceiling!;
      expect(ceiling.summary.map((r) => r.scenario).sort()).toEqual([
        'grpc',
        'grpc-64k-window',
        'grpc-framing-copy',
        'raw-http2',
      ]);

      // The targets: all eight, each judged where its part ran (no pinned run in quick mode,
      // and no 150 ms round trip, which three of them are about).
      expect(report.targets).toHaveLength(8);
      const notRun = report.targets.filter((t) => t.met === undefined).map((t) => t.name);
      expect(notRun).toEqual([
        'C at 150 ms / C at 0 ms',
        "C's paced trainer at 150 ms, share of its time stalled (paced at 80% of C at 0 ms)",
        "C's paced trainer at 150 ms, batch wait p99, ms",
      ]);
      // Every row of D also as a share of A.
      expect(report.latencyVsA).toHaveLength(6);
      for (const row of report.latencyVsA) expect(row.ratioToA).toBeGreaterThan(0);

      const markdown = await readFile(path.join(outDir, 'suite.md'), 'utf8');
      for (const heading of ['## Targets', '## A-C', '## D:', '## F:', '## E:', '## G:']) {
        expect(markdown).toContain(heading);
      }
      const svg = await readFile(path.join(outDir, 'latency.svg'), 'utf8');
      expect(svg.startsWith('<svg')).toBe(true);
      // Every part's own JSON went to the results folder too.
      for (const part of [stream, latency, concurrency, scale, ceiling]) {
        expect(path.dirname(part.jsonPath)).toBe(outDir);
      }
      const pids = [stream, latency, concurrency, scale].flatMap((r) => r.childPids);
      expect(pids.length).toBeGreaterThan(10);
      expect(pids.filter(isProcessAlive)).toEqual([]);

      // --from judges the folder again without running anything; a wrong file is a clear error.
      await rm(path.join(outDir, 'suite.md'));
      const from = (file: string, exitCode: number) =>
        bench.run('suite', ['--from', path.join(outDir, file)], {
          quick: false,
          outDir: false,
          dataset: false,
          exitCode,
        });
      await from('suite.json', 0);
      expect(await readFile(path.join(outDir, 'suite.md'), 'utf8')).toBe(markdown);
      const wrong = await from('latency.svg', 1);
      expect(wrong.stderr).toMatch(/--from .*latency\.svg/);
    },
  );
});
