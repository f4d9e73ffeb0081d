import { describe, expect, it } from 'vitest';
import { parseValue } from '../../cli/benchOptions.js';
import { formatTlsReport, type TlsReportView } from '../../tls/formatTlsReport.js';
import { summarizeTlsRuns } from '../../tls/summarizeTlsRuns.js';
import {
  resolveTlsBenchOptions,
  TLS_BENCH_DEFAULTS,
  TLS_BENCH_QUICK,
  TLS_FLAGS,
} from '../../tls/TlsBenchOptions.js';
import type { TlsLegRun } from '../../tls/TlsBenchReport.js';
import { TLS_LEG_NAMES, TLS_LEGS, tlsLegLabel } from '../../tls/tlsLegs.js';
import { LoaderError } from '../../../src/core/index.js';
import { clusterSpecSchema, nodeLayouts, renderCassandraYaml } from '../../../src/devdb/index.js';

const tlsLegs = (list: string): unknown => parseValue(TLS_FLAGS.legs.schema, list);

const stateRoot = '/repo/.state';

describe('bench tls options', () => {
  it('defaults to 3,000 samples, 3 runs and every leg on a node at 127.0.0.41; --quick to 300 and 1', () => {
    const full = resolveTlsBenchOptions({ stateRoot });
    expect(full).toMatchObject({
      samples: TLS_BENCH_DEFAULTS.samples,
      runs: 3,
      batchSize: 128,
      legs: [...TLS_LEG_NAMES],
      nodeDir: undefined,
      nodeAddress: '127.0.0.41',
      dataset: 'bench_photo_imagenet_n3000',
      imageRoot: '/repo/.state/bench/photos-imagenet',
      outDir: '/repo/.state/bench',
    });
    const quick = resolveTlsBenchOptions({ stateRoot, quick: true });
    expect([quick.samples, quick.runs]).toEqual([TLS_BENCH_QUICK.samples, TLS_BENCH_QUICK.runs]);
    expect(quick.dataset).toBe('bench_photo_imagenet_n300');
    // Explicit values win over --quick.
    expect(resolveTlsBenchOptions({ stateRoot, quick: true, runs: 2 }).runs).toBe(2);
  });

  it('always runs plaintext, the reference of every ratio, and keeps the table order', () => {
    const o = resolveTlsBenchOptions({ stateRoot, legs: ['full', 'grpc-tls'] });
    expect(o.legs).toEqual(['plaintext', 'grpc-tls', 'full']);
  });

  it('refuses bad numbers, no legs, and a node address that is not loopback or is the shared node', () => {
    const bad = (input: Parameters<typeof resolveTlsBenchOptions>[0], message: RegExp): void => {
      let error: unknown;
      try {
        resolveTlsBenchOptions(input);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(LoaderError);
      expect((error as LoaderError).code).toBe('INVALID_ARGUMENT');
      expect((error as Error).message).toMatch(message);
    };
    bad({ stateRoot, runs: 0 }, /--runs must be a whole number from 1/);
    bad({ stateRoot, samples: 1.5 }, /--samples/);
    bad({ stateRoot, nodeHeapMb: 100 }, /--node-heap/);
    bad({ stateRoot, legs: [] }, /--legs: at least one leg/);
    bad({ stateRoot, nodeAddress: '10.0.0.5' }, /--node-address "10.0.0.5": expected a loopback/);
    bad({ stateRoot, nodeAddress: 'localhost' }, /--node-address/);
    bad({ stateRoot, nodeAddress: '127.0.0.1' }, /shared development node/);
  });

  it('parses --legs, naming the known legs for an unknown one', () => {
    expect(tlsLegs('db-tls, full,db-tls')).toEqual(['db-tls', 'full']);
    expect(() => tlsLegs('db-tls,quic')).toThrow(
      /use a comma-separated subset of plaintext, grpc-tls, db-tls, both-tls, full/,
    );
    expect(() => tlsLegs(' , ')).toThrow(/--legs/);
  });

  it('labels each leg by what is encrypted on which side', () => {
    expect(TLS_LEGS.map(tlsLegLabel)).toEqual([
      'gRPC plain, database plain',
      'gRPC TLS, database plain',
      'gRPC plain, database TLS',
      'gRPC TLS, database TLS',
      'gRPC mTLS + token, database TLS',
    ]);
  });
});

/** A run of `leg` moving 1 GB at `mbps` MB/s with the given CPU seconds. */
function run(
  leg: TlsLegRun['leg'],
  runIndex: number,
  mbps: number,
  cpu: TlsLegRun['cpuSeconds'] = { loader: 4, client: 2, database: 5 },
): TlsLegRun {
  return {
    leg,
    run: runIndex,
    samples: 10_000,
    bytes: 1e9,
    wallSeconds: 1e9 / (mbps * 1e6),
    cpuSeconds: cpu,
  };
}

describe('summarizeTlsRuns', () => {
  const legs = TLS_LEGS.filter((l) => l.name === 'plaintext' || l.name === 'grpc-tls');

  it('pairs each run with the plaintext run of the same round: drift between rounds cancels', () => {
    // The machine got twice as fast in round 2 and slower again in round 3; grpc-tls always
    // made 0.8 of that round's plaintext. A ratio of medians would say 160/200 = 0.8 only by
    // luck; here every pair says 0.8.
    const runs = [
      run('plaintext', 0, 100),
      run('grpc-tls', 0, 80),
      run('plaintext', 1, 200),
      run('grpc-tls', 1, 160),
      run('plaintext', 2, 150),
      run('grpc-tls', 2, 120),
    ];
    const [plain, tls] = summarizeTlsRuns(legs, runs);
    expect(plain!.ratioToPlaintext).toBe(1);
    expect(tls!.ratioToPlaintext).toBeCloseTo(0.8, 10);
    expect(plain!.bytesPerSecond).toBeCloseTo(150e6, 0);
    expect(plain!.bytesPerSecondRange[0]).toBeCloseTo(100e6, 0);
    expect(plain!.bytesPerSecondRange[1]).toBeCloseTo(200e6, 0);
    expect(tls!.samplesPerSecond).toBeCloseTo(1200, 6);
    expect(tls!.label).toBe('gRPC TLS, database plain');
  });

  it('divides CPU seconds by the GB streamed, and says null for a figure it lacks', () => {
    const runs = [
      { ...run('plaintext', 0, 100, { loader: 3, client: 1.5, database: 6 }), bytes: 5e8 },
      run('grpc-tls', 0, 90, { client: 2 }),
    ];
    const [plain, tls] = summarizeTlsRuns(legs, runs);
    expect(plain!.cpuSecondsPerGB).toEqual({ loader: 6, client: 3, database: 12 });
    expect(tls!.cpuSecondsPerGB).toEqual({ loader: null, client: 2, database: null });
  });

  it('leaves out legs without runs, and has no ratio without a plaintext run to pair with', () => {
    const summary = summarizeTlsRuns(TLS_LEGS, [run('db-tls', 0, 50)]);
    expect(summary.map((s) => s.leg)).toEqual(['db-tls']);
    expect(summary[0]!.ratioToPlaintext).toBeNull();
  });
});

describe('formatTlsReport', () => {
  const runs = [
    run('plaintext', 0, 200),
    run('db-tls', 0, 170),
    run('plaintext', 1, 180, { client: 1 }),
    run('db-tls', 1, 190, { client: 1 }),
  ];
  const view: TlsReportView = {
    summary: summarizeTlsRuns(TLS_LEGS, runs),
    settings: {
      samples: 3000,
      batchSize: 128,
      runs: 2,
      legs: [...TLS_LEGS],
      nodeAddress: '127.0.0.41',
    },
    dataset: {
      name: 'bench_photo_imagenet_n3000',
      samples: 3000,
      totalBytes: 3000 * 103_900,
      meanBytes: 103_900,
      classes: 1000,
      ingested: false,
      prepareSeconds: 0,
    },
    seconds: 321,
    notes: ['a note'],
    jsonPath: '/repo/.state/bench/tls-x.json',
    environment: { cores: 2, loadAverage: [1.5, 1, 0.25] },
  };
  const text = formatTlsReport(view);

  it('prints one row per leg with medians, spreads, CPU per GB and the ratio', () => {
    // plaintext: 200 and 180 MB/s -> median 190; CPU known only in run 1 for loader and db.
    expect(text).toContain(
      '| plaintext (gRPC plain, database plain) | 190.0 (180-200) | 1900 | n/a | 1.50 | n/a | 1.00 |',
    );
    // db-tls: 170/200 = 0.85 and 190/180 = 1.056 -> median 0.95.
    expect(text).toMatch(
      /^\| db-tls \(gRPC plain, database TLS\) \| 180\.0 \(170-190\) \| 1800 \| .* \| 0\.95 \|$/m,
    );
    expect(text).toContain('medians of 2 run(s) per leg, legs interleaved; 321 s, 2 cores');
    expect(text).toContain('load average 1.50 1.00 0.25');
    expect(text).toContain('103.9 kB (mean)');
    expect(text).toContain('figures: /repo/.state/bench/tls-x.json');
    expect(text).toContain('note: a note');
  });

  it('states each TLS leg against the goal without judging plaintext against itself', () => {
    expect(text).toContain(
      '- db-tls (gRPC plain, database TLS): 0.95 of plaintext (goal >= 0.9: met)',
    );
    expect(text).not.toMatch(/^- plaintext/m);
    const worse = formatTlsReport({
      ...view,
      summary: summarizeTlsRuns(TLS_LEGS, [run('plaintext', 0, 200), run('grpc-tls', 0, 100)]),
    });
    expect(worse).toContain(
      '- grpc-tls (gRPC TLS, database plain): 0.50 of plaintext (goal >= 0.9: not met)',
    );
  });
});

describe('cassandra.yaml of the bench tls node', () => {
  const base = {
    format: 1,
    cassandraVersion: '5.0.9',
    clusterName: 'c',
    nodes: 1,
    firstAddress: '127.0.0.41',
    nativePort: 9042,
    storagePort: 7000,
    heapMb: 768,
    tls: true,
  };
  const keystore = { file: '/state/tls/node.p12', password: 'pw' };

  it('with tlsOptional accepts plaintext on the TLS port; without, stays TLS only', () => {
    const optional = clusterSpecSchema.parse({ ...base, tlsOptional: true });
    const yaml = renderCassandraYaml(optional, nodeLayouts('/state', optional)[0]!, keystore);
    expect(yaml).toMatch(/client_encryption_options:\n {2}enabled: true\n {2}optional: true\n/);
    const only = clusterSpecSchema.parse(base);
    expect(only.tlsOptional).toBe(false);
    expect(renderCassandraYaml(only, nodeLayouts('/state', only)[0]!, keystore)).toMatch(
      /client_encryption_options:\n {2}enabled: true\n {2}optional: false\n/,
    );
  });
});
