import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { CACHE_FLAGS, resolveCacheBenchOptions } from '../cache/CacheBenchOptions.js';
import { formatCacheReport } from '../cache/formatCacheReport.js';
import { runCacheBench } from '../cache/runCacheBench.js';
import { formatCeilingReport, runCeilingBench } from '../ceiling/runCeilingBench.js';
import {
  CONCURRENCY_FLAGS,
  resolveConcurrencyBenchOptions,
} from '../concurrency/ConcurrencyBenchOptions.js';
import { formatConcurrencyReport } from '../concurrency/formatConcurrencyReport.js';
import { runConcurrencyBench } from '../concurrency/runConcurrencyBench.js';
import { CORES_FLAGS, resolveCoresBenchOptions } from '../cores/CoresBenchOptions.js';
import { formatCoresReport } from '../cores/formatCoresReport.js';
import { runCoresBench } from '../cores/runCoresBench.js';
import { dropBenchDataset } from '../../test/support/index.js';
import { formatIngestBenchReport } from '../ingest/formatIngestBenchReport.js';
import { INGEST_FLAGS, resolveIngestBenchOptions } from '../ingest/resolveIngestBenchOptions.js';
import { runIngestBench } from '../ingest/runIngestBench.js';
import { formatLatencyReport } from '../latency/formatLatencyReport.js';
import { LATENCY_FLAGS, resolveLatencyBenchOptions } from '../latency/LatencyBenchOptions.js';
import { runLatencyBench } from '../latency/runLatencyBench.js';
import { toxiproxyBinary } from '../latency/toxiproxyBinary.js';
import { formatScaleReport } from '../scale/formatScaleReport.js';
import { runScaleBench } from '../scale/runScaleBench.js';
import { resolveScaleBenchOptions, SCALE_FLAGS } from '../scale/ScaleBenchOptions.js';
import { formatSplitBench, runSplitBench } from '../splits/runSplitBench.js';
import { formatMixingReport } from '../stream/formatMixingReport.js';
import { formatColumnsReport } from '../stream/formatColumnsReport.js';
import { formatLedgerReport } from '../stream/formatLedgerReport.js';
import { formatStreamReport } from '../stream/formatStreamReport.js';
import { resolveStreamBenchOptions, STREAM_FLAGS } from '../stream/resolveStreamBenchOptions.js';
import { runStreamBench } from '../stream/runStreamBench.js';
import { formatTlsReport } from '../tls/formatTlsReport.js';
import { runTlsBench } from '../tls/runTlsBench.js';
import { resolveTlsBenchOptions, TLS_BENCH_QUICK, TLS_FLAGS } from '../tls/TlsBenchOptions.js';
import { benchPython } from '../../test/support/index.js';
import { formatTransformReport } from '../transform/formatTransformReport.js';
import { runTransformBench } from '../transform/runTransformBench.js';
import {
  resolveTransformBenchOptions,
  TRANSFORM_BENCH_DEFAULTS,
  TRANSFORM_FLAGS,
} from '../transform/TransformBenchOptions.js';
import { addBenchCommand } from './addBenchCommand.js';
import { addBenchFaultsCommand } from './benchFaults.js';
import {
  batchSizeFlag,
  flag,
  onOff,
  parseValue,
  positiveNumber,
  text,
  wholeNumber,
} from './benchOptions.js';
import { addBenchRobustnessCommands } from './benchRobustness.js';
import { addBenchSuiteCommand } from './benchSuite.js';
import { benchStateDir } from '../../test/support/index.js';
import { createDbClient } from '../../src/core/index.js';

const SPLITS_FLAGS = {
  rows: flag(
    '--rows <n>',
    'rows of the synthetic set',
    wholeNumber('--rows', 1000, 1e9),
    1_280_000,
  ),
  runs: flag('--runs <n>', 'split creations to time', wholeNumber('--runs', 1, 20), 3),
};

/** The flags of `bench ceiling`; the run's own defaults apply to those left out. */
const CEILING_FLAGS = {
  runs: flag(
    '--runs <k>',
    'timed runs of each leg, interleaved (default 3, quick 1)',
    wholeNumber('--runs', 1, 1000),
  ),
  gigabytes: flag(
    '--gigabytes <n>',
    'sample GB (10^9 bytes) sent per run (default 3, quick 0.3)',
    positiveNumber('--gigabytes'),
  ),
  batchSize: batchSizeFlag(128),
  sampleBytes: flag(
    '--sample-bytes <n>',
    'bytes per sample',
    wholeNumber('--sample-bytes', 1, 1e9),
    100_000,
  ),
  cpuProfileDir: flag(
    '--cpu-prof <dir>',
    'write a CPU profile of each server child (node --cpu-prof) into dir',
    text,
  ),
};

/**
 * Registers the benchmarks on `bench` (the `scylla-loader-bench` program); each prints a
 * Markdown report, writes JSON under `.state/bench/` and, with `--docs`, its table(s) into the
 * performance page. Figures are printed, never asserted.
 */
export function registerBenchCommands(bench: Command): Command {
  addBenchCommand(bench, {
    name: 'splits',
    description:
      'split an ImageNet-sized synthetic metadata set (1.28M rows, 1,000 classes, groups of ' +
      '1-500) 7:2:1, balanced, grouped: wall time, peak memory, worst deviation',
    flags: SPLITS_FLAGS,
    docs: true,
    run: async (_input, context, { rows, runs }) => {
      const client = await createDbClient(context.db);
      try {
        const result = await runSplitBench(client, {
          dataset: `bench_splits_${rows}`,
          shape: { rows, classes: 1000, maxGroup: 500 },
          runs,
          log: context.log,
        });
        const out = path.join(context.stateRoot, 'bench', `splits-${Date.now()}.json`);
        await mkdir(path.dirname(out), { recursive: true });
        const figures = { cores: os.cpus().length, node: process.version, ...result };
        await writeFile(out, JSON.stringify(figures, null, 2));
        return { markdown: `${formatSplitBench(result.runs)}figures: ${out}\n`, table: 'splits' };
      } finally {
        await client.shutdown();
      }
    },
  });
  addBenchCommand(bench, {
    name: 'ingest',
    description:
      'ingest ~100 kB JPEGs (stored as they are) and MNIST into fresh bench_ keyspaces: ' +
      'samples/s, MB/s, CPU seconds of the ingest, the database and the rest of the ' +
      "machine; optionally the local node's cold start",
    quick: 'well under a minute: 200 images, 1 run, C=128, MNIST 500+500',
    flags: INGEST_FLAGS,
    docs: true,
    run: async (input, context, _values, flags) => {
      const ownCluster = !flags['contactPoints'] && !process.env.SCYLLA_LOADER_CONTACT_POINTS;
      const report = await runIngestBench(
        resolveIngestBenchOptions({
          ...context,
          ...input,
          localStateDir: ownCluster ? benchStateDir : undefined,
        }),
      );
      return { markdown: formatIngestBenchReport(report), table: 'ingest' };
    },
  });
  addBenchRobustnessCommands(bench);
  addBenchCommand(bench, {
    name: 'stream',
    description:
      'throughput of photo samples (~104 kB, or 224x224 ~15 kB) through the loader and the ' +
      'SDK versus a tight loop on the same driver, unpinned and with the database pinned to ' +
      'one core and the loader and client to another; plus the batch-layout encode/decode ' +
      'micro-benchmark',
    quick: 'about a minute: 300 samples, 1 run, C=128, unpinned only',
    flags: {
      ...STREAM_FLAGS,
      drop: flag(
        '--drop',
        'drop the benchmark dataset (of --samples / --dataset) and exit',
        onOff,
        false,
      ),
    },
    docs: true,
    adjustDb: (db, flags) => {
      const text = flags['connectionsPerHost'] ?? process.env.SCYLLA_LOADER_CONNECTIONS_PER_HOST;
      if (text !== undefined) {
        db.connectionsPerHost = parseValue(wholeNumber('--connections-per-host', 1, 1024), text);
      }
    },
    run: async (input, context) => {
      const options = resolveStreamBenchOptions({ ...context, ...input });
      if (input.drop === true) {
        const client = await createDbClient(context.db);
        try {
          const existed = await dropBenchDataset(client, options.dataset);
          return { markdown: `${existed ? 'dropped' : 'no'} dataset ${options.dataset}\n` };
        } finally {
          await client.shutdown();
        }
      }
      const report = await runStreamBench(options);
      // A mixture's comparison has its own table; the run's other rows (often one placement,
      // a few rounds) would not stand for the stream table.
      if (options.mixWeights) {
        return {
          markdown: formatStreamReport(report),
          table: 'mixing',
          docsMarkdown: formatMixingReport(report),
        };
      }
      if (options.columns) {
        return {
          markdown: formatStreamReport(report),
          table: 'columns',
          docsMarkdown: formatColumnsReport(report),
        };
      }
      // One table per payload the issue sets a goal for (a tiny payload's has no place).
      if (options.ledger) {
        const table =
          options.payload === 'tiny' ? undefined : (`ledger-${options.payload}` as const);
        return {
          markdown: formatStreamReport(report),
          ...(table ? { table } : {}),
          docsMarkdown: formatLedgerReport(report),
        };
      }
      const table = options.groupReads === undefined ? 'stream' : 'grouped-reads';
      return { markdown: formatStreamReport(report), table };
    },
  }).option(
    '--connections-per-host <n>',
    'driver connections per host, for the loader and the tight loop alike ' +
      '(default $SCYLLA_LOADER_CONNECTIONS_PER_HOST)',
  );
  addBenchCommand(bench, {
    name: 'latency',
    description:
      'throughput and batch waits of the loader in order (prefetch 2) and out of order ' +
      '(defaults) with round trips of 0, 20 and 150 ms injected by toxiproxy between loader ' +
      'and database, and with a congested second route; Markdown table, JSON and SVG chart',
    quick: 'about a minute: 300 samples, 1 run, round trips 0 and 20 ms only',
    flags: LATENCY_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runLatencyBench(
        resolveLatencyBenchOptions({ ...context, ...input, toxiproxy: toxiproxyBinary() }),
      );
      return { markdown: formatLatencyReport(report), table: 'latency' };
    },
  });
  addBenchCommand(bench, {
    name: 'cache',
    description:
      'the sample cache: cold and warm epochs with and without a cache at 0 and 150 ms ' +
      'injected by toxiproxy (samples/s, database reads per epoch from the metrics), a sweep ' +
      'of 4 jobs sharing one loader, a split twice the disk tier; goals with PASS/FAIL',
    quick: 'about a minute: 1,000 samples (the split twice the cache: 32 MiB)',
    flags: CACHE_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runCacheBench(
        resolveCacheBenchOptions({ ...context, ...input, toxiproxy: toxiproxyBinary() }),
      );
      return { markdown: formatCacheReport(report), table: 'cache' };
    },
  });
  addBenchCommand(bench, {
    name: 'ceiling',
    description:
      "the service's own ceiling: one batch served from memory (no database reads) through " +
      'the loader server and the SDK, each in its own process, next to a raw Node HTTP/2 ' +
      'stream of the same bytes and to gRPC with the default 64 KiB window: GB/s, ' +
      'batches/s, CPU seconds per GB of each side',
    quick: '~300 MB per run, 1 run of each leg',
    flags: CEILING_FLAGS,
    docs: true,
    // `createLoaderServer` connects to a database even though these batches never touch it.
    run: async (input, context, f) => {
      const report = await runCeilingBench({
        db: context.db,
        quick: input.quick,
        ...(f.runs === undefined ? {} : { runs: f.runs }),
        ...(f.gigabytes === undefined ? {} : { bytesPerRun: f.gigabytes * 1e9 }),
        batchSize: f.batchSize,
        sampleBytes: f.sampleBytes,
        ...(f.cpuProfileDir ? { cpuProfileDir: path.resolve(f.cpuProfileDir) } : {}),
        outDir: path.join(context.stateRoot, 'bench'),
        log: context.log,
      });
      return { markdown: formatCeilingReport(report), table: 'ceiling' };
    },
  });
  addBenchSuiteCommand(bench);
  addBenchCommand(bench, {
    name: 'scale',
    description:
      'splits of 10^4, 10^5 and 10^6 samples of 100 bytes, each streamed once per run through ' +
      'a fresh loader: its peak RSS, CPU ms per batch, time to the first batch',
    quick: 'well under a minute once the data exists: sizes 1000,10000, 1 run',
    flags: SCALE_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runScaleBench(resolveScaleBenchOptions({ ...context, ...input }));
      return { markdown: formatScaleReport(report), table: 'scale' };
    },
  });
  addBenchCommand(bench, {
    name: 'concurrency',
    description:
      'k = 1, 2, 4, 8, 16 ranks of one job streaming from one loader at once: aggregate ' +
      'samples/s and MB/s, per-stream rates, CPU, batch waits, loader peak RSS, scaling ' +
      'against k=1, and a check that the ranks together got every sample exactly once',
    quick: 'well under a minute: 300 samples, 1 and 4 streams, 1 run',
    flags: CONCURRENCY_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runConcurrencyBench(
        resolveConcurrencyBenchOptions({ ...context, ...input }),
      );
      return { markdown: formatConcurrencyReport(report), table: 'concurrency' };
    },
  });
  addBenchCommand(bench, {
    name: 'cores',
    description:
      'serve --workers 1, 2, ... (up to the cores) under the same k ranks: aggregate ' +
      'samples/s, scaling, loader CPU s per GB (all its processes), RSS per worker, ' +
      'and an exactly-once check of the ranks',
    quick: 'about a minute: 300 samples, 1 and 2 workers, 4 ranks, 1 run',
    flags: CORES_FLAGS,
    docs: true,
    run: async (input, context) => {
      const report = await runCoresBench(resolveCoresBenchOptions({ ...context, ...input }));
      return { markdown: formatCoresReport(report), table: 'cores' };
    },
  });
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
  addBenchCommand(bench, {
    name: 'tls',
    description:
      'MB/s, samples/s and loader CPU seconds per GB streaming imagenet-size photos with TLS ' +
      'on the gRPC leg, the database leg, both, and mTLS + token, against plaintext; legs ' +
      'interleaved, one database node of its own (TLS optional on its CQL port)',
    quick: `CI-sized: ${TLS_BENCH_QUICK.samples} samples, ${TLS_BENCH_QUICK.runs} run`,
    flags: TLS_FLAGS,
    docs: true,
    database: false,
    run: async (input, context) => {
      const report = await runTlsBench(resolveTlsBenchOptions({ ...context, ...input }));
      return { markdown: formatTlsReport(report), table: 'tls' };
    },
  });
  addBenchFaultsCommand(bench);
  return bench;
}
