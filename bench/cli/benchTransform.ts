import { Command } from 'commander';
import { invalidArgument } from '../../src/core/index.js';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { benchPython } from '../transform/benchPython.js';
import { formatTransformReport } from '../transform/formatTransformReport.js';
import { runTransformBench } from '../transform/runTransformBench.js';
import {
  resolveTransformBenchOptions,
  TRANSFORM_BENCH_DEFAULTS,
  TRANSFORM_BENCH_QUICK,
} from '../transform/TransformBenchOptions.js';
import { TRANSFORM_LEG_NAMES, type TransformLegName } from '../transform/transformLegs.js';
import { wholeNumberFlag } from './benchFlags.js';
import { withBenchContext } from './benchContext.js';
import { addDbOptions, type DbFlags } from '../../src/cli/dbOptions.js';
import { runAction } from '../../src/cli/runAction.js';

/** Flags of `bench transform`. */
export interface BenchTransformFlags extends DbFlags {
  quick: boolean;
  samples?: string;
  batchSize?: string;
  epochs?: string;
  runs?: string;
  rtt?: string;
  legs?: string;
  python?: string;
  dataset?: string;
}

/**
 * Adds `transform` to a `bench` command: issue 14's comparison of the server-side transform
 * (RandomResizedCrop 224 + flip, raw uint8) against the same transform in Python DataLoader
 * workers (PIL; torchvision.transforms.v2), JPEG against raw bytes on the wire, and the raw
 * leg at an injected round trip against 0 ms. Prints a Markdown table and the goal ratios;
 * writes JSON under `.state/bench/`.
 */
export function addBenchTransformCommand(bench: Command): void {
  const d = TRANSFORM_BENCH_DEFAULTS;
  const cmd = bench
    .command('transform')
    .description(
      'images/s, CPU per image and response bytes of the server-side transform ' +
        `(RandomResizedCrop ${d.size} + flip, raw uint8; and JPEG) against the same transform ` +
        `in a Python DataLoader with ${d.workers} workers (PIL; torchvision v2), and the raw ` +
        'leg with a round trip injected between loader and database; legs interleaved',
    )
    .option(
      '--quick',
      `CI-sized: ${TRANSFORM_BENCH_QUICK.samples} samples, ${TRANSFORM_BENCH_QUICK.runs} run`,
      false,
    )
    .option('--samples <n>', `distinct ~104 kB photo JPEGs in the dataset (default ${d.samples})`)
    .option('--batch-size <n>', `samples per batch (default ${d.batchSize})`)
    .option('--epochs <n>', `epochs each leg streams per run (default ${d.epochs})`)
    .option('--runs <k>', `runs of every leg, interleaved; medians reported (default ${d.runs})`)
    .option('--rtt <ms>', `round trip injected in the latency leg (default ${d.rttMs})`)
    .option('--legs <list>', `a subset of: ${TRANSFORM_LEG_NAMES.join(', ')} (default all)`)
    .option(
      '--python <path>',
      'Python with torch, torchvision and grpcio (default $SCYLLA_LOADER_BENCH_PYTHON, else ' +
        "the Python client's test venv)",
    )
    .option('--dataset <name>', 'dataset name (default that of bench stream for --samples)');
  addDbOptions(cmd).action(
    runAction(async (flags: BenchTransformFlags) => {
      const python = benchPython(flags.python);
      const legs = flags.legs === undefined ? undefined : legsFlag(flags.legs);
      await withBenchContext(flags, async (context) => {
        const options = resolveTransformBenchOptions({
          ...context,
          toxiproxy: toxiproxyBinary(),
          python,
          quick: flags.quick,
          ...(flags.samples ? { samples: wholeNumberFlag('--samples', flags.samples) } : {}),
          ...(flags.batchSize
            ? { batchSize: wholeNumberFlag('--batch-size', flags.batchSize) }
            : {}),
          ...(flags.epochs ? { epochs: wholeNumberFlag('--epochs', flags.epochs) } : {}),
          ...(flags.runs ? { runs: wholeNumberFlag('--runs', flags.runs) } : {}),
          ...(flags.rtt ? { rttMs: wholeNumberFlag('--rtt', flags.rtt) } : {}),
          ...(legs ? { legs } : {}),
          ...(flags.dataset ? { dataset: flags.dataset } : {}),
        });
        const report = await runTransformBench(options);
        process.stdout.write(formatTransformReport(report));
      });
    }),
  );
}

/** `--legs a,b` as leg names, or INVALID_ARGUMENT naming the known ones. */
export function legsFlag(text: string): TransformLegName[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const known = new Set<string>(TRANSFORM_LEG_NAMES);
  const bad = names.filter((n) => !known.has(n));
  if (names.length === 0 || bad.length > 0) {
    throw invalidArgument(
      `--legs ${JSON.stringify(text)}: use a comma-separated subset of ${TRANSFORM_LEG_NAMES.join(', ')}`,
    );
  }
  return [...new Set(names)] as TransformLegName[];
}
