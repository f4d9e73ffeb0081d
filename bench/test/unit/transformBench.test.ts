import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseValue } from '../../cli/benchOptions.js';
import { BENCH_PYTHON_ENV, benchPython } from '../../../test/support/index.js';
import { formatTransformReport } from '../../transform/formatTransformReport.js';
import { summarizeTransformRuns } from '../../transform/summarizeTransformRuns.js';
import {
  resolveTransformBenchOptions,
  type TransformBenchInput,
  TRANSFORM_FLAGS,
} from '../../transform/TransformBenchOptions.js';
import type { TransformLegRun } from '../../transform/TransformBenchReport.js';
import {
  legOrder,
  serverTransform,
  transformLegs,
  TRANSFORM_LEG_NAMES,
} from '../../transform/transformLegs.js';
import { packageRoot } from '../../../test/support/index.js';
import { LoaderError } from '../../../src/core/index.js';

const legsFlag = (list: string): unknown => parseValue(TRANSFORM_FLAGS.legs.schema, list);

const base: TransformBenchInput = {
  db: {
    contactPoints: ['127.0.0.1'],
    port: 9042,
    localDataCenter: 'datacenter1',
    connectionsPerHost: 2,
  } as TransformBenchInput['db'],
  dbPid: undefined,
  toxiproxy: '/bin/toxiproxy-server',
  python: '/venv/bin/python',
  stateRoot: '/repo/.state',
};

describe('resolveTransformBenchOptions', () => {
  it("defaults to the issue's run: 2,000 imagenet photos, batches of 64, 150 ms, every leg", () => {
    const o = resolveTransformBenchOptions(base);
    expect(o).toMatchObject({
      samples: 2000,
      dataset: 'bench_photo_imagenet_n2000',
      batchSize: 64,
      epochs: 1,
      runs: 3,
      workers: 2,
      rttMs: 150,
      size: 224,
      flip: 0.5,
      jpegQuality: 90,
      imageRoot: '/repo/.state/bench/photos-imagenet',
      outDir: '/repo/.state/bench',
    });
    expect(o.legs).toEqual([...TRANSFORM_LEG_NAMES]);
  });

  it("quick takes bench stream --quick's dataset and one run; flags still win", () => {
    expect(resolveTransformBenchOptions({ ...base, quick: true })).toMatchObject({
      samples: 300,
      dataset: 'bench_photo_imagenet_n300',
      runs: 1,
    });
    expect(
      resolveTransformBenchOptions({ ...base, quick: true, samples: 500, runs: 2 }),
    ).toMatchObject({ samples: 500, runs: 2, dataset: 'bench_photo_imagenet_n500' });
  });

  it('keeps the chosen legs in the table order', () => {
    const o = resolveTransformBenchOptions({ ...base, legs: ['server-jpeg', 'server-raw'] });
    expect(o.legs).toEqual(['server-raw', 'server-jpeg']);
  });

  it('refuses numbers out of range with the flag named', () => {
    expect(() => resolveTransformBenchOptions({ ...base, runs: 0 })).toThrow(/--runs/);
    expect(() => resolveTransformBenchOptions({ ...base, epochs: 1.5 })).toThrow(/--epochs/);
    expect(() => resolveTransformBenchOptions({ ...base, rttMs: -1 })).toThrow(/--rtt/);
    expect(() => resolveTransformBenchOptions({ ...base, batchSize: 0 })).toThrow(/--batch-size/);
    // Too few samples for both DataLoader workers to get a batch.
    expect(() => resolveTransformBenchOptions({ ...base, samples: 100 })).toThrow(
      /--samples 100 is below 128/,
    );
    expect(() => resolveTransformBenchOptions({ ...base, legs: [] })).toThrow(/--legs/);
  });
});

describe('legsFlag', () => {
  it('takes a comma-separated subset and refuses unknown names', () => {
    expect(legsFlag('python-pil, server-raw,python-pil')).toEqual(['python-pil', 'server-raw']);
    expect(() => legsFlag('server-raw,gpu')).toThrow(
      /subset of server-raw, server-raw-sharp, python-pil/,
    );
    expect(() => legsFlag(',')).toThrow(/--legs/);
  });
});

describe('legs', () => {
  it('has the two proxied raw legs at 0 ms and at the round trip asked for', () => {
    const legs = transformLegs(150);
    expect(legs.map((l) => l.name)).toEqual([...TRANSFORM_LEG_NAMES]);
    expect(legs.filter((l) => l.route === 'proxy').map((l) => [l.output, l.rttMs])).toEqual([
      ['raw', 0],
      ['raw', 150],
    ]);
  });

  it('rotates the order by one leg per run', () => {
    expect(legOrder(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(legOrder(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(legOrder(['a', 'b', 'c'], 5)).toEqual(['c', 'a', 'b']);
    expect(legOrder([], 3)).toEqual([]);
  });

  it("sends torchvision's RandomResizedCrop and flip; quality only with JPEG", () => {
    const raw = serverTransform({ size: 224, flip: 0.5, output: 'raw', quality: 90 });
    expect(raw).toEqual({
      channels: 3,
      randomResizedCrop: {
        height: 224,
        width: 224,
        scaleMin: 0.08,
        scaleMax: 1,
        ratioMin: 3 / 4,
        ratioMax: 4 / 3,
      },
      horizontalFlip: 0.5,
      interpolation: 'INTERPOLATION_BILINEAR',
      output: 'TRANSFORM_OUTPUT_RAW',
      badImagePolicy: 'BAD_IMAGE_POLICY_FAIL',
    });
    expect(serverTransform({ size: 224, flip: 0.5, output: 'jpeg', quality: 90 })).toMatchObject({
      output: 'TRANSFORM_OUTPUT_JPEG',
      quality: 90,
    });
  });
});

function legRun(over: Partial<TransformLegRun> & Pick<TransformLegRun, 'leg'>): TransformLegRun {
  return {
    run: 0,
    images: 1000,
    wallSeconds: 5,
    cpuSeconds: { loader: 3, python: 1, database: 0.5 },
    wireBytesPerImage: 150_600,
    wireBytesCounted: true,
    lastShape: [64, 3, 224, 224],
    ...over,
  };
}

/** Runs whose medians are known: server raw 4 ms/image, PIL 10, v2 8; 0 ms 200/s, rtt 190/s. */
function sampleRuns(): TransformLegRun[] {
  return [
    legRun({ leg: 'server-raw', run: 0 }),
    legRun({ leg: 'server-raw', run: 1, wallSeconds: 4, cpuSeconds: { loader: 2.5, python: 1.5 } }),
    legRun({ leg: 'server-raw', run: 2, wallSeconds: 10, cpuSeconds: { loader: 6, python: 2 } }),
    // The sharp loader: 9 ms of loader CPU per image, 3x the native one's 3.
    legRun({ leg: 'server-raw-sharp', wallSeconds: 15, cpuSeconds: { loader: 9, python: 1 } }),
    legRun({
      leg: 'python-pil',
      wallSeconds: 8,
      cpuSeconds: { loader: 1, python: 9, database: 0.5 },
      wireBytesPerImage: 101_616,
      wireBytesCounted: false,
    }),
    legRun({
      leg: 'python-v2',
      wallSeconds: 6,
      cpuSeconds: { loader: 1, python: 7 },
      wireBytesPerImage: 101_616,
      wireBytesCounted: false,
    }),
    legRun({ leg: 'server-jpeg', wireBytesPerImage: 25_100 }),
    legRun({ leg: 'server-raw-proxy-0ms', wallSeconds: 5 }),
    legRun({ leg: 'server-raw-proxy-rtt', wallSeconds: 1000 / 190 }),
    // Image + mask pairs: 3.6 ms of loader CPU per pair, 1.2x the image alone's 3.
    legRun({ leg: 'server-raw-masks', cpuSeconds: { loader: 3.6, python: 1 } }),
    // LoaderDataset's trainer side alone: 0.2 ms of Python CPU per sample over bytes, 0.4 raw.
    legRun({ leg: 'dataset-bytes', cpuSeconds: { loader: 2, python: 0.2 } }),
    legRun({ leg: 'dataset-raw', cpuSeconds: { loader: 3, python: 0.4 } }),
    legRun({ leg: 'dataset-bytes-main', cpuSeconds: { loader: 2, python: 0.1 } }),
    legRun({ leg: 'dataset-raw-main', cpuSeconds: { loader: 3, python: 0.15 } }),
  ];
}

describe('summarizeTransformRuns', () => {
  it('takes medians per leg and the goal ratios from them', () => {
    const { summary, goals } = summarizeTransformRuns(transformLegs(150), sampleRuns());
    expect(summary.map((s) => s.leg)).toEqual([...TRANSFORM_LEG_NAMES]);
    const raw = summary[0]!;
    expect(raw.runs).toBe(3);
    expect(raw.imagesPerSecond).toBe(200); // 100, 200, 250
    expect(raw.imagesPerSecondRange).toEqual([100, 250]);
    expect(raw.cpuMsPerImage.total).toBe(4); // 4, 4, 8
    expect(raw.cpuMsPerImage.loader).toBe(3); // 3, 2.5, 6
    expect(raw.cpuMsPerImage.database).toBeNull(); // unknown in one run
    expect(raw.imagesPerCpuSecond).toBe(250);
    const pil = summary[2]!;
    expect(pil.cpuMsPerImage).toEqual({ total: 10, loader: 1, python: 9, database: 0.5 });
    expect(pil.wireBytesCounted).toBe(false);
    expect(goals.nativeLoaderCpuVsSharp).toBeCloseTo(3);
    expect(goals.cpuEfficiencyVsPil).toBeCloseTo(2.5);
    expect(goals.cpuEfficiencyVsV2).toBeCloseTo(2);
    expect(goals.latencyRetention).toBeCloseTo(0.95);
    expect(goals.rawOverJpegBytes).toBeCloseTo(150_600 / 25_100);
    // Python CPU per image: PIL 9 ms, v2 7 ms, server raw 1.5 ms (median of 1, 1.5, 2).
    expect(goals.trainerCpuPilOverRaw).toBeCloseTo(6);
    expect(goals.trainerCpuV2OverRaw).toBeCloseTo(14 / 3);
    expect(goals.masksLoaderCpuVsImage).toBeCloseTo(1.2);
    expect(goals.datasetPythonMsPerSample.bytes).toBeCloseTo(0.2);
    expect(goals.datasetPythonMsPerSample.raw).toBeCloseTo(0.4);
    expect(goals.datasetPythonMsPerSample.rawMain).toBeCloseTo(0.15);
  });

  it('leaves a goal out when one of its legs did not run', () => {
    const runs = sampleRuns().filter((r) => r.leg !== 'python-v2' && r.leg !== 'server-jpeg');
    const { summary, goals } = summarizeTransformRuns(transformLegs(150), runs);
    expect(summary.map((s) => s.leg)).not.toContain('python-v2');
    expect(goals.cpuEfficiencyVsV2).toBeNull();
    expect(goals.rawOverJpegBytes).toBeNull();
    expect(goals.cpuEfficiencyVsPil).toBeCloseTo(2.5);
  });
});

describe('formatTransformReport', () => {
  const legs = transformLegs(150);
  const view = (runs: TransformLegRun[]): Parameters<typeof formatTransformReport>[0] => ({
    ...summarizeTransformRuns(legs, runs),
    settings: {
      samples: 1000,
      batchSize: 64,
      epochs: 1,
      runs: 3,
      workers: 2,
      rttMs: 150,
      size: 224,
      flip: 0.5,
      jpegQuality: 90,
      legs,
      transform: {},
    },
    dataset: {
      name: 'bench_photo_imagenet_n1000',
      samples: 1000,
      totalBytes: 101_616_000,
      meanBytes: 101_616,
      classes: 1000,
      ingested: false,
      prepareSeconds: 0,
    },
    seconds: 321,
    notes: ['a note'],
    jsonPath: '/x/transform.json',
    environment: { cores: 2, loadAverage: [1.5, 2, 2.25] },
  });

  it('prints a row per leg with units in the header, and each goal with its verdict', () => {
    const text = formatTransformReport(view(sampleRuns()));
    const rows = text.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| leg'));
    expect(rows.map((r) => r.split(' ')[1])).toEqual([...TRANSFORM_LEG_NAMES]);
    expect(text).toContain(
      '| leg | images/s | CPU ms/image (loader + Python) | loader CPU ms/image | Python CPU ms/image | database CPU ms/image | images per CPU s | response kB/image |',
    );
    // Server raw: median 200 images/s (100-250), 4 ms/image, 250 images per CPU s, 150.6 kB.
    expect(rows[0]).toMatch(
      /^\| server-raw \(server: RRC \+ flip, raw \(native\)\) \| 200 \(100-250\) \| 4\.00 \| 3\.00 \| /,
    );
    expect(rows[0]).toMatch(/\| n\/a \| 250 \| 150\.6 \|$/);
    // The Python legs' bytes are the stored size, marked.
    expect(rows[1]).toMatch(/^\| server-raw-sharp \(server: RRC \+ flip, raw \(sharp\)\) /);
    expect(rows[2]).toMatch(/\| 101\.6\* \|$/);
    expect(text).toContain(
      '- loader CPU per image, sharp / native (raw legs; the transform alone is the larger ratio): 3.00x (goal >= 3x: met)',
    );
    expect(text).toContain('- server raw images per CPU s / Python PIL: 2.50x (goal >= 2x: met)');
    expect(text).toContain('- server raw images per CPU s / Python v2: 2.00x (goal >= 2x: met)');
    expect(text).toContain(
      '- server raw images/s at 150 ms / at 0 ms (both via toxiproxy): 0.95 (goal >= 0.9: met)',
    );
    expect(text).toContain('- response bytes per image, raw / JPEG q90: 6.00x');
    expect(text).toContain(
      '- Python (trainer-side) CPU per image, PIL / server raw: 6.0x, v2 / server raw: 4.7x',
    );
    expect(text).toContain(
      '- LoaderDataset trainer side, Python CPU per sample, stored bytes, 2 DataLoader workers (dataset-bytes, issue 41): 0.200 ms (goal <= 0.3 ms: met)',
    );
    expect(text).toContain(
      '- LoaderDataset trainer side, Python CPU per sample, raw tensors, 2 DataLoader workers (dataset-raw, issue 41): 0.400 ms (goal <= 0.3 ms: not met)',
    );
    expect(text).toContain(
      '- LoaderDataset trainer side, Python CPU per sample, raw tensors, num_workers=0 (dataset-raw-main, issue 41): 0.150 ms (goal <= 0.3 ms: met)',
    );
    expect(text).toContain('load average 1.50 2.00 2.25');
    expect(text).toContain('note: a note');
    expect(text).toContain('figures: /x/transform.json');
  });

  it('says when a goal is not met or cannot be computed', () => {
    const runs = sampleRuns()
      .filter((r) => r.leg !== 'python-v2')
      .map((r) => (r.leg === 'server-raw-proxy-rtt' ? { ...r, wallSeconds: 10 } : r));
    const text = formatTransformReport(view(runs));
    expect(text).toContain(
      '- server raw images/s at 150 ms / at 0 ms (both via toxiproxy): 0.50 (goal >= 0.9: not met)',
    );
    expect(text).toContain('- server raw images per CPU s / Python v2: n/a (a leg is missing)');
    const withoutDataset = formatTransformReport(
      view(sampleRuns().filter((r) => r.leg !== 'dataset-raw')),
    );
    expect(withoutDataset).toContain(
      'raw tensors, 2 DataLoader workers (dataset-raw, issue 41): n/a (leg not run)',
    );
  });
});

describe('benchPython', () => {
  it('takes the flag, then the environment variable', () => {
    expect(benchPython('/a/python', { [BENCH_PYTHON_ENV]: '/b/python' })).toBe('/a/python');
    expect(benchPython(undefined, { [BENCH_PYTHON_ENV]: '/b/python' })).toBe('/b/python');
  });

  it('finds the venv scripts/python-env.sh makes, and says how to get one when absent', () => {
    // The real script of this checkout, over an empty cache folder: the lookup is shared, not
    // copied, so this fails if the bench and the set-up ever name the venv differently.
    const cache = mkdtempSync(path.join(os.tmpdir(), 'sl-bench-python-'));
    const env = { XDG_CACHE_HOME: cache, PATH: process.env.PATH, HOME: process.env.HOME };
    let error: unknown;
    try {
      benchPython(undefined, env);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(LoaderError);
    expect((error as LoaderError).code).toBe('FAILED_PRECONDITION');
    expect((error as Error).message).toMatch(/scripts\/python-env\.sh/);
    // The message names the folder where the venv of this lock file is made.
    expect((error as Error).message).toContain(path.join(cache, 'scylla-loader', 'python'));

    const venv = execFileSync(
      'bash',
      [path.join(packageRoot, 'scripts', 'python-env.sh'), '--path'],
      {
        env,
        encoding: 'utf8',
      },
    ).trim();
    expect(venv.startsWith(path.join(cache, 'scylla-loader', 'python', 'venv-'))).toBe(true);
    // A venv counts once its set-up finished (the marker is written last).
    mkdirSync(venv, { recursive: true });
    expect(() => benchPython(undefined, env)).toThrow(LoaderError);
    writeFileSync(path.join(venv, '.complete'), '');
    expect(benchPython(undefined, env)).toBe(path.join(venv, 'bin', 'python'));
  });
});
