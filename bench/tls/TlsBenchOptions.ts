import { isIPv4 } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import {
  flag,
  names,
  parseFlags,
  text,
  wholeNumber,
  type FlagInput,
  photoBenchFlags,
} from '../cli/benchOptions.js';
import { benchPaths, defaultDatasetName, type BenchInput } from '../stream/StreamBenchOptions.js';
import { TLS_LEG_NAMES } from './tlsLegs.js';

/** A loopback IPv4 address other than the shared development node's 127.0.0.1. */
const loopbackAddress = z.string().transform((address, ctx) => {
  if (!isIPv4(address) || !address.startsWith('127.')) {
    ctx.addIssue({
      code: 'custom',
      message:
        `--node-address ${JSON.stringify(address)}: expected a loopback IPv4 address ` +
        "such as 127.0.0.41 (the benchmark's node runs on this machine)",
    });
  } else if (address === '127.0.0.1') {
    ctx.addIssue({
      code: 'custom',
      message:
        '--node-address 127.0.0.1 is the shared development node; pick another loopback ' +
        'address such as 127.0.0.41',
    });
  }
  return address;
});

/** Defaults of the full run; `--quick` takes {@link TLS_BENCH_QUICK} over them. */
export const TLS_BENCH_DEFAULTS = {
  samples: 3000,
  batchSize: 128,
  runs: 3,
  nodeAddress: '127.0.0.41',
  nodeHeapMb: 768,
} as const;

/** What `--quick` changes: `bench stream --quick`'s dataset size (300 samples), one run. */
export const TLS_BENCH_QUICK = { samples: 300, runs: 1 } as const;

const d = TLS_BENCH_DEFAULTS;
const q = TLS_BENCH_QUICK;

/** The flags of `bench tls` with their defaults (full; quick: CI-sized). */
export const TLS_FLAGS = {
  ...photoBenchFlags({
    samples: d.samples,
    quickSamples: q.samples,
    runsOf: 'leg',
    runs: d.runs,
    quickRuns: q.runs,
    maxRuns: 100,
    batchSize: d.batchSize,
  }),
  legs: flag(
    '--legs <list>',
    `a subset of: ${TLS_LEG_NAMES.join(', ')} (default all; plaintext always runs)`,
    names('--legs', TLS_LEG_NAMES, 'leg'),
  ),

  nodeDir: flag(
    '--node-dir <dir>',
    "state folder of the benchmark's database node, kept running for the next run " +
      '(default: a temporary folder, the node stopped and removed at the end)',
    text,
  ),
  nodeAddress: flag(
    '--node-address <ip>',
    'loopback address of that node',
    loopbackAddress,
    d.nodeAddress as string,
  ),
  nodeHeapMb: flag(
    '--node-heap <MiB>',
    'heap of that node',
    wholeNumber('--node-heap', 256, 65_536),
    d.nodeHeapMb as number,
  ),
};

/**
 * Fills in the defaults of `bench tls` (or of its quick mode) and checks them, with errors
 * naming the flag. `plaintext` is added to a subset of legs that lacks it: every ratio is to
 * it.
 */
export function resolveTlsBenchOptions(
  input: Omit<BenchInput, 'db' | 'dbPid'> & FlagInput<typeof TLS_FLAGS>,
) {
  const f = parseFlags(TLS_FLAGS, input, input.quick);
  const paths = benchPaths(input.stateRoot);
  return {
    samples: f.samples,
    dataset: f.dataset ?? defaultDatasetName(f.samples),
    batchSize: f.batchSize,
    runs: f.runs,
    legs: TLS_LEG_NAMES.filter(
      (n) => n === 'plaintext' || f.legs === undefined || f.legs.includes(n),
    ),
    nodeDir: f.nodeDir === undefined ? undefined : path.resolve(f.nodeDir),
    nodeAddress: f.nodeAddress,
    nodeHeapMb: f.nodeHeapMb,
    imageRoot: paths.imageRoot,
    outDir: f.outDir === undefined ? paths.outDir : path.resolve(f.outDir),
    progress: input.progress,
    log: input.log,
    signal: input.signal,
  };
}

/** Settings of `runTlsBench`, as {@link resolveTlsBenchOptions} fills them in. */
export type TlsBenchOptions = ReturnType<typeof resolveTlsBenchOptions>;
