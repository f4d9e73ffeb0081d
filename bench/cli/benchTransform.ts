import type { Command } from 'commander';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { benchPython } from '../transform/benchPython.js';
import { formatTransformReport } from '../transform/formatTransformReport.js';
import { runTransformBench } from '../transform/runTransformBench.js';
import {
  resolveTransformBenchOptions,
  TRANSFORM_BENCH_DEFAULTS,
  TRANSFORM_FLAGS,
} from '../transform/TransformBenchOptions.js';
import { TRANSFORM_LEG_NAMES, type TransformLegName } from '../transform/transformLegs.js';
import { addBenchCommand } from './addBenchCommand.js';
import { flag, names, parseValue, text } from './benchOptions.js';

/**
 * Adds `transform` to a `bench` command: issue 14's comparison of the server-side transform
 * (RandomResizedCrop 224 + flip, raw uint8) against the same transform in Python DataLoader
 * workers (PIL; torchvision.transforms.v2), JPEG against raw bytes on the wire, and the raw
 * leg at an injected round trip against 0 ms. Prints a Markdown table and the goal ratios;
 * writes JSON under `.state/bench/`.
 */
export function addBenchTransformCommand(bench: Command): void {
  const d = TRANSFORM_BENCH_DEFAULTS;
  addBenchCommand(bench, {
    name: 'transform',
    description:
      'images/s, CPU per image and response bytes of the server-side transform ' +
      `(RandomResizedCrop ${d.size} + flip, raw uint8; and JPEG) against the same transform ` +
      `in a Python DataLoader with ${d.workers} workers (PIL; torchvision v2), and the raw ` +
      'leg with a round trip injected between loader and database; legs interleaved',
    quick: 'CI-sized: 300 samples, 1 run',
    flags: {
      ...TRANSFORM_FLAGS,
      python: flag(
        '--python <path>',
        'Python with torch, torchvision and grpcio (default $SCYLLA_LOADER_BENCH_PYTHON, else ' +
          "the Python client's test venv)",
        text,
      ),
    },
    docs: true,
    run: async (input, context) => {
      const python = benchPython(input.python);
      const report = await runTransformBench(
        resolveTransformBenchOptions({
          ...context,
          ...input,
          toxiproxy: toxiproxyBinary(),
          python,
        }),
      );
      return { markdown: formatTransformReport(report), table: 'transform' };
    },
  });
}

/** `--legs a,b` as leg names, or INVALID_ARGUMENT naming the known ones. */
export function legsFlag(list: string): TransformLegName[] {
  return parseValue(names('--legs', TRANSFORM_LEG_NAMES, 'leg'), list);
}
