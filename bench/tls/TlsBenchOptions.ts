import { isIPv4 } from 'node:net';
import { invalidArgument } from '../../src/core/index.js';
import {
  benchPaths,
  defaultDatasetName,
  type BenchProgressFactory,
} from '../stream/StreamBenchOptions.js';
import { TLS_LEG_NAMES, type TlsLegName } from './tlsLegs.js';

/** Settings of {@link runTlsBench} (see {@link resolveTlsBenchOptions}). */
export interface TlsBenchOptions {
  /** Distinct ~104 kB photo JPEGs in the dataset (`bench stream`'s imagenet payload). */
  samples: number;
  dataset: string;
  batchSize: number;
  /** Measured runs of every leg, interleaved (the order rotates each run); medians reported. */
  runs: number;
  /** The legs to run, in the table's order; always starts with `plaintext` (the reference). */
  legs: TlsLegName[];
  /**
   * State folder of the benchmark's own database node: kept (and reused by the next run) when
   * given; absent: a temporary folder, the node stopped and the folder removed at the end.
   */
  nodeDir: string | undefined;
  /** Address of that node (its CQL port is 9042), other than the shared node's 127.0.0.1. */
  nodeAddress: string;
  /** Heap of that node, MiB. */
  nodeHeapMb: number;
  /** Folder of the generated images (an ImageFolder tree, shared with the other benchmarks). */
  imageRoot: string;
  /** Folder the JSON report is written to. */
  outDir: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

/** What `bench tls` is given; the rest is defaulted. */
export interface TlsBenchInput {
  /** The repository's `.state` folder. */
  stateRoot: string;
  /** CI-sized: {@link TLS_BENCH_QUICK}. */
  quick?: boolean;
  samples?: number;
  batchSize?: number;
  runs?: number;
  legs?: readonly TlsLegName[];
  dataset?: string;
  nodeDir?: string;
  nodeAddress?: string;
  nodeHeapMb?: number;
  outDir?: string;
  progress?: BenchProgressFactory;
  log?: (line: string) => void;
  signal?: AbortSignal;
}

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

/**
 * Fills in the defaults of `bench tls` (or of its quick mode) and checks them, with errors
 * naming the flag. `plaintext` is added to a subset of legs that lacks it: every ratio is to
 * it.
 */
export function resolveTlsBenchOptions(input: TlsBenchInput): TlsBenchOptions {
  const d = TLS_BENCH_DEFAULTS;
  const quick = input.quick ?? false;
  const samples = input.samples ?? (quick ? TLS_BENCH_QUICK.samples : d.samples);
  const runs = input.runs ?? (quick ? TLS_BENCH_QUICK.runs : d.runs);
  const batchSize = input.batchSize ?? d.batchSize;
  const nodeHeapMb = input.nodeHeapMb ?? d.nodeHeapMb;
  const check = (flag: string, value: number, min: number, max: number): void => {
    if (!Number.isInteger(value) || value < min || value > max) {
      throw invalidArgument(`${flag} must be a whole number from ${min} to ${max}, not ${value}`);
    }
  };
  check('--samples', samples, 1, 10_000_000);
  check('--runs', runs, 1, 100);
  check('--batch-size', batchSize, 1, 8192);
  check('--node-heap', nodeHeapMb, 256, 65_536);
  const nodeAddress = input.nodeAddress ?? d.nodeAddress;
  if (!isIPv4(nodeAddress) || !nodeAddress.startsWith('127.')) {
    throw invalidArgument(
      `--node-address ${JSON.stringify(nodeAddress)}: expected a loopback IPv4 address ` +
        `such as ${d.nodeAddress} (the benchmark's node runs on this machine)`,
    );
  }
  if (nodeAddress === '127.0.0.1') {
    throw invalidArgument(
      '--node-address 127.0.0.1 is the shared development node; pick another loopback ' +
        `address such as ${d.nodeAddress}`,
    );
  }
  if (input.legs !== undefined && input.legs.length === 0) {
    throw invalidArgument('--legs: at least one leg is needed');
  }
  const legs = TLS_LEG_NAMES.filter(
    (n) => n === 'plaintext' || input.legs === undefined || input.legs.includes(n),
  );
  const paths = benchPaths(input.stateRoot);
  return {
    samples,
    dataset: input.dataset ?? defaultDatasetName(samples),
    batchSize,
    runs,
    legs,
    nodeDir: input.nodeDir,
    nodeAddress,
    nodeHeapMb,
    imageRoot: paths.imageRoot,
    outDir: input.outDir ?? paths.outDir,
    ...(input.progress ? { progress: input.progress } : {}),
    ...(input.log ? { log: input.log } : {}),
    ...(input.signal ? { signal: input.signal } : {}),
  };
}
