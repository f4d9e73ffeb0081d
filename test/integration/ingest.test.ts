import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import type cassandra from 'cassandra-driver';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareMnist } from '../../src/datasets/index.js';
import {
  createDbClient,
  ingestDataset,
  readImageFolder,
  readManifest,
  readDatasetInfo,
  ensureDatasetSchema,
  datasetNamespace,
  sampleId,
  LoaderError,
  listedSource,
  MAX_SAMPLE_BYTES,
} from '../../src/core/index.js';
import { toGrpcStatus } from '../../src/testing/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { writeCorruptJpeg, writeJpegs } from '../support/fixtures.js';
import { collect, runCli, spawnCli } from '../support/runCli.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace, selectAll } from '../support/dbHelpers.js';

const simple = { class: 'SimpleStrategy', replicationFactor: 1 } as const;
let client: cassandra.Client;
const keyspaces: string[] = [];
let work: string;
let mnistManifest: string;

function newDataset(): string {
  const ks = uniqueKeyspace();
  keyspaces.push(ks);
  return ks;
}

function cliEnv(): NodeJS.ProcessEnv {
  const db = testDbConfig();
  return {
    ...dbEnv(db),
  };
}

async function allRows(ks: string, table: string, cols: string): Promise<cassandra.types.Row[]> {
  return selectAll(client, `SELECT ${cols} FROM ${ks}.${table}`);
}

async function ids(ks: string, table: string): Promise<string[]> {
  return (await allRows(ks, table, 'id')).map((r) => String(r['id'])).sort();
}

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  work = await mkdtemp(path.join(os.tmpdir(), 'sl-ingest-'));
  mnistManifest = (await prepareMnist({ outDir: path.join(work, 'mnist'), limit: 300 })).manifest;
});

afterAll(async () => {
  for (const ks of keyspaces) await dropKeyspace(client, ks);
  await client?.shutdown();
});

describe('schema', () => {
  it('creating the schema twice is a no-op', async () => {
    const ks = newDataset();
    const opts = {
      dataset: ks,
      replication: simple,
      columns: [{ name: 'x', type: 'int' as const }],
    };
    await ensureDatasetSchema(client, opts);
    await client.execute(`INSERT INTO ${ks}.metadata (id, x) VALUES (uuid(), 5)`);
    const schemaOf = async (): Promise<string> =>
      JSON.stringify(
        (
          await client.execute(
            'SELECT table_name, column_name, type FROM system_schema.columns WHERE keyspace_name = ?',
            [ks],
            { prepare: true },
          )
        ).rows,
      );
    const before = await schemaOf();
    await ensureDatasetSchema(client, opts);
    expect(await schemaOf()).toBe(before);
    const rs = await client.execute(`SELECT x FROM ${ks}.metadata`);
    expect(rs.rows.map((r) => r['x'])).toEqual([5]);
  });

  it('refuses a column whose type differs from the stored one, and invalid names', async () => {
    const ks = newDataset();
    await ensureDatasetSchema(client, {
      dataset: ks,
      replication: simple,
      columns: [{ name: 'x', type: 'int' }],
    });
    await expect(
      ensureDatasetSchema(client, {
        dataset: ks,
        replication: simple,
        columns: [{ name: 'x', type: 'text' }],
      }),
    ).rejects.toThrow(/stored as int/);
    await expect(
      ensureDatasetSchema(client, { dataset: 'Bad-Name', replication: simple, columns: [] }),
    ).rejects.toThrow(/invalid dataset name/);
    await expect(
      ensureDatasetSchema(client, {
        dataset: ks,
        replication: simple,
        columns: [{ name: 'label', type: 'int' }],
      }),
    ).rejects.toThrow(/built in/);
  });
});

describe('ingest', () => {
  it('stores an ImageFolder byte for byte, with data and metadata rows for every id', async () => {
    const ks = newDataset();
    const root = path.join(work, 'folder');
    const cats = await writeJpegs(path.join(root, 'cat'), 5);
    const dogs = await writeJpegs(path.join(root, 'dog'), 7);
    const summary = await ingestDataset(client, {
      dataset: ks,
      source: await readImageFolder(root),
      replication: simple,
      concurrency: 8,
      strict: false,
    });
    expect(summary.written).toBe(12);
    expect(summary.dataset.sampleCount).toBe(12);

    const ns = datasetNamespace(ks);
    const expected = new Map<string, { file: string; label: number }>();
    for (const f of cats)
      expected.set(sampleId(`cat/${path.basename(f)}`, ns), { file: f, label: 0 });
    for (const f of dogs)
      expected.set(sampleId(`dog/${path.basename(f)}`, ns), { file: f, label: 1 });
    expect(await ids(ks, 'samples')).toEqual([...expected.keys()].sort());
    expect(await ids(ks, 'metadata')).toEqual([...expected.keys()].sort());
    for (const row of await allRows(ks, 'samples', 'id, label, data')) {
      const want = expected.get(String(row['id']))!;
      expect(row['label']).toBe(want.label);
      expect(Buffer.compare(row['data'] as Buffer, await readFile(want.file))).toBe(0);
    }
    const info = await readDatasetInfo(client, ks);
    expect(info.labelNames).toEqual(['cat', 'dog']);
    expect([...info.classCounts].sort()).toEqual([
      [0, 5],
      [1, 7],
    ]);
  });

  it('ingests a manifest with metadata columns, and a re-ingest changes nothing', async () => {
    const ks = newDataset();
    const run = async () =>
      ingestDataset(client, {
        dataset: ks,
        source: await readManifest(mnistManifest),
        replication: simple,
        concurrency: 16,
        strict: false,
      });
    const first = await run();
    expect(first.written).toBe(600);
    const idsBefore = await ids(ks, 'samples');
    const metaRows = await allRows(
      ks,
      'metadata',
      'id, label, source_key, subset, "index", size_bytes',
    );
    const row = metaRows.find((r) => r['source_key'] === 'test/00007.png')!;
    expect(row['subset']).toBe('test');
    expect(row['index']).toBe(7);
    const png = await readFile(path.join(path.dirname(mnistManifest), 'test/00007.png'));
    expect(row['size_bytes']).toBe(png.length);
    const sample = await client.execute(
      `SELECT data, label FROM ${ks}.samples WHERE id = ?`,
      [row['id']],
      {
        prepare: true,
      },
    );
    expect(Buffer.compare(sample.first()['data'] as Buffer, png)).toBe(0);
    expect(sample.first()['label']).toBe(row['label']);
    const { width, height } = await sharp(png).metadata();
    expect([width, height]).toEqual([28, 28]);

    const generation = (await readDatasetInfo(client, ks)).generation;
    expect(generation).toMatch(/^[0-9a-f-]{36}$/);
    const second = await run();
    expect(second.written).toBe(0);
    expect(second.alreadyPresent).toBe(600);
    expect(await ids(ks, 'samples')).toEqual(idsBefore);
    expect(second.dataset).toEqual(first.dataset);
    const info = await readDatasetInfo(client, ks);
    expect(info.sampleCount).toBe(600);
    expect(info.columns).toEqual({ index: 'int', subset: 'text' });
    // The generation the sample cache keys entries by stays: hosts' caches stay warm.
    expect(info.generation).toBe(generation);
  });

  it('preprocesses with sharp to the requested size, equal to sharp on its own', async () => {
    const ks = newDataset();
    const root = path.join(work, 'wide');
    const files = await writeJpegs(path.join(root, 'a'), 3, 300, 200);
    await ingestDataset(client, {
      dataset: ks,
      source: await readImageFolder(root),
      replication: simple,
      preprocess: { resizeShorter: 256, crop: { width: 224, height: 224 }, quality: 90 },
      concurrency: 4,
      strict: false,
    });
    const ns = datasetNamespace(ks);
    for (const f of files) {
      const rs = await client.execute(
        `SELECT data FROM ${ks}.samples WHERE id = ?`,
        [sampleId(`a/${path.basename(f)}`, ns)],
        {
          prepare: true,
        },
      );
      const stored = rs.first()['data'] as Buffer;
      const meta = await sharp(stored).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 224, 224]);
      // 300x200 with the shorter side at 256 is 384x256; the centre 224x224 starts at (80, 16).
      const own = await sharp(await readFile(f))
        .resize(384, 256, { fit: 'fill' })
        .extract({ left: 80, top: 16, width: 224, height: 224 })
        .jpeg({ quality: 90 })
        .toBuffer();
      expect(Buffer.compare(stored, own)).toBe(0);
    }
  });

  it('skips and reports a corrupt image, and --strict fails on it (CLI)', async () => {
    const root = path.join(work, 'corrupt');
    await writeJpegs(path.join(root, 'ok'), 4);
    await writeCorruptJpeg(path.join(root, 'ok', 'broken.jpg'));
    const args = ['--image-folder', root, '--resize', '32', '--crop', '32'];

    const ks = newDataset();
    const lenient = await runCli(['ingest', ks, ...args], cliEnv());
    expect(lenient.code).toBe(0);
    expect(lenient.stderr).toContain(`skipped ${path.join(root, 'ok', 'broken.jpg')}`);
    expect(lenient.stdout).toMatch(/written 4 .*skipped 1/);
    expect((await readDatasetInfo(client, ks)).sampleCount).toBe(4);

    const strictKs = newDataset();
    const strict = await runCli(
      ['ingest', strictKs, ...args, '--strict', '--concurrency', '1'],
      cliEnv(),
    );
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain(`error: ${path.join(root, 'ok', 'broken.jpg')}:`);
    expect(strict.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('reports a missing file by path and carries on', async () => {
    const ks = newDataset();
    const manifest = path.join(work, 'missing.csv');
    await writeFile(manifest, 'path,label\nmnist/train/00000.png,5\nnot/there.png,1\n');
    const summary = await ingestDataset(client, {
      dataset: ks,
      source: await readManifest(manifest),
      replication: simple,
      concurrency: 2,
      strict: false,
    });
    expect(summary.written).toBe(1);
    expect(summary.skipped).toEqual([
      { origin: `${manifest}:3`, path: path.join(work, 'not/there.png'), reason: 'file not found' },
    ]);
  });

  it('a bug during ingest is reported as itself (INTERNAL), not as retryable UNAVAILABLE', async () => {
    const ks = newDataset();
    // A source with a bug: an int column holding text, which readManifest would never produce.
    // The driver refuses to encode it before anything is sent: no retry can cure that.
    const entry = (i: number, x: number | string) => ({
      sourceKey: `s/${i}`,
      filePath: `/generated/${i}`,
      data: Buffer.from(`sample-${i}`),
      label: i % 2,
      metadata: { x },
      origin: `test:${i}`,
    });
    const source = listedSource({
      description: 'generated',
      entries: [entry(0, 0), entry(1, 1), entry(2, 'two'), entry(3, 3)],
      labelNames: [],
      columns: [{ name: 'x', type: 'int' }],
    });
    const err = await ingestDataset(client, {
      dataset: ks,
      source,
      replication: simple,
      concurrency: 1,
      strict: true,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(LoaderError);
    expect(toGrpcStatus(err, { callId: 'c1' })).toEqual({
      code: status.INTERNAL,
      details: "internal error; see the loader's log (call id c1)",
    });
    // In source order, one at a time: the samples before the bad one are in, none after it.
    const ns = datasetNamespace(ks);
    expect(await ids(ks, 'metadata')).toEqual([sampleId('s/0', ns), sampleId('s/1', ns)].sort());
  });

  it('a cancelled ingest stops with the abort reason, and a re-run completes it', async () => {
    const ks = newDataset();
    const source = listedSource({
      description: 'generated',
      entries: Array.from({ length: 200 }, (_, i) => ({
        sourceKey: `s/${i}`,
        filePath: `/generated/${i}`,
        data: Buffer.from(`sample-${i}`),
        label: i % 3,
        metadata: {},
        origin: `test:${i}`,
      })),
      labelNames: [],
      columns: [],
    });
    const abort = new AbortController();
    const seen: number[] = [];
    const cancelled = ingestDataset(client, {
      dataset: ks,
      source,
      replication: simple,
      concurrency: 4,
      strict: true,
      signal: abort.signal,
      onProgress: (p) => {
        seen.push(p.done);
        if (p.done === 20) abort.abort();
      },
    });
    await expect(cancelled).rejects.toMatchObject({ name: 'AbortError' });
    // Progress counts up by one per sample; no sample is started after the cancel, so at most
    // the ones under way (concurrency 4) finish after it, and before the promise rejects:
    // nothing is written after that.
    expect(seen.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const partial = (await ids(ks, 'metadata')).length;
    expect(partial).toBeGreaterThanOrEqual(20);
    expect(partial).toBeLessThanOrEqual(24);
    await sleep(300);
    expect((await ids(ks, 'metadata')).length).toBe(partial);

    const rerun = await ingestDataset(client, {
      dataset: ks,
      source,
      replication: simple,
      concurrency: 4,
      strict: true,
    });
    expect(rerun.alreadyPresent).toBe(partial);
    expect(rerun.written).toBe(200 - partial);
    expect(await ids(ks, 'samples')).toHaveLength(200);
  });

  it('gives clear errors and a non-zero exit for user mistakes (CLI)', async () => {
    const bad = await runCli(['ingest', 'Bad-Name', '--image-folder', work], cliEnv());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: invalid dataset name "Bad-Name"/);
    const noRoot = await runCli(['ingest', 'fine', '--image-folder', '/no/such/dir'], cliEnv());
    expect(noRoot.code).toBe(1);
    expect(noRoot.stderr).toMatch(/^error: ImageFolder root \/no\/such\/dir does not exist/);
    const malformed = path.join(work, 'malformed.jsonl');
    await writeFile(malformed, '{"path":"a.png","label":1}\nnot json\n');
    const m = await runCli(['ingest', 'fine', '--manifest', malformed], cliEnv());
    expect(m.code).toBe(1);
    expect(m.stderr).toContain(`error: ${malformed}:2: malformed JSON line`);
    const both = await runCli(['ingest', 'fine'], cliEnv());
    expect(both.stderr).toMatch(/give exactly one source/);
    for (const r of [bad, noRoot, m, both]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('an ingest killed midway and run again ends complete (CLI)', async () => {
    const ks = newDataset();
    const args = ['ingest', ks, '--manifest', mnistManifest, '--concurrency', '2'];
    const child = spawnCli(args, cliEnv());
    const done = collect(child);
    // Kill it once some, but not all, samples are in.
    const deadline = Date.now() + 60_000;
    const countSoFar = async (): Promise<number> => {
      try {
        const rs = await client.execute(`SELECT count(*) FROM ${ks}.metadata`);
        return Number(rs.first()['count']);
      } catch {
        return 0; // schema not created yet
      }
    };
    while (Date.now() < deadline && (await countSoFar()) < 50) {
      await sleep(100);
    }
    child.kill('SIGKILL');
    const killed = await done;
    expect(killed.signal).toBe('SIGKILL');
    // Writes the CLI sent just before the kill may still be applied by a busy node: take the
    // count once it stands still.
    let partial = (await ids(ks, 'metadata')).length;
    for (let i = 0; ; i++) {
      await sleep(300);
      const now = (await ids(ks, 'metadata')).length;
      if (now === partial) break;
      expect(i).toBeLessThan(30);
      partial = now;
    }
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(600);

    const rerun = await runCli(args, cliEnv());
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(new RegExp(`already present ${partial}\\b`));
    const all = await ids(ks, 'samples');
    expect(all).toHaveLength(600);
    expect(await ids(ks, 'metadata')).toEqual(all);
    expect((await readDatasetInfo(client, ks)).sampleCount).toBe(600);
  });

  it('--workers 2 splits the source over two processes, each sample written once (CLI)', async () => {
    const ks = newDataset();
    const run = await runCli(
      ['ingest', ks, '--manifest', mnistManifest, '--workers', '2', '--concurrency', '16'],
      cliEnv(),
    );
    expect(run.stderr).not.toMatch(/error/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/written 600 \(/);
    expect(run.stdout).toMatch(/dataset \S+ now holds 600 samples/);
    const all = await ids(ks, 'samples');
    expect(all).toHaveLength(600);
    expect(await ids(ks, 'metadata')).toEqual(all);
    // The same ids as a single process makes.
    const ns = datasetNamespace(ks);
    const source = await readManifest(mnistManifest);
    expect(all).toEqual(source.entries.map((e) => sampleId(e.sourceKey, ns)).sort());
    const again = await runCli(
      ['ingest', ks, '--manifest', mnistManifest, '--workers', '2'],
      cliEnv(),
    );
    expect(again.stdout).toMatch(/written 0 \(.*already present 600/);
  });

  it('--shard i/n parts are disjoint and together the whole source (CLI)', async () => {
    const ks = newDataset();
    const counts: number[] = [];
    for (const shard of ['0/3', '1/3', '2/3']) {
      const r = await runCli(
        ['ingest', ks, '--manifest', mnistManifest, '--shard', shard],
        cliEnv(),
      );
      expect(r.code).toBe(0);
      counts.push(Number(/written (\d+) \(/.exec(r.stdout)?.[1]));
    }
    expect(counts).toEqual([200, 200, 200]);
    expect(await ids(ks, 'metadata')).toHaveLength(600);
    const bad = await runCli(
      ['ingest', ks, '--manifest', mnistManifest, '--shard', '3/3'],
      cliEnv(),
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: --shard 3\/3: use i\/n with 0 <= i < n/);
    const both = await runCli(
      ['ingest', ks, '--manifest', mnistManifest, '--shard', '0/2', '--workers', '2'],
      cliEnv(),
    );
    expect(both.stderr).toMatch(/give --workers or --shard, not both/);
  });

  it('skips a sample over the size limit and a label outside the class names, naming them', async () => {
    const ks = newDataset();
    const entry = (i: number, data: Buffer, label: number) => ({
      sourceKey: `s/${i}`,
      data,
      label,
      metadata: {},
      origin: `test:${i}`,
    });
    const skips: string[] = [];
    const summary = await ingestDataset(client, {
      dataset: ks,
      source: listedSource({
        description: 'generated',
        entries: [
          entry(0, Buffer.from('fine'), 0),
          entry(1, Buffer.alloc(MAX_SAMPLE_BYTES + 1, 1), 1),
          entry(2, Buffer.from('label out of range'), 2),
          entry(3, Buffer.alloc(0), 0),
        ],
        labelNames: ['a', 'b'],
        columns: [],
      }),
      replication: simple,
      concurrency: 4,
      strict: false,
      onSkip: (s) => skips.push(`${s.path}: ${s.reason}`),
    });
    expect(summary.written).toBe(1);
    expect(summary.failed).toBe(3);
    expect(skips.sort()).toEqual([
      `s/1: sample is ${MAX_SAMPLE_BYTES + 1} bytes with its label blob, over the limit of ` +
        `${MAX_SAMPLE_BYTES} bytes (one sample is one database write; the database refuses ` +
        'writes over 16 MiB)',
      's/2: sample has label 2, but the dataset has 2 classes (labels 0 to 1)',
      's/3: sample has no data (0 bytes)',
    ]);
    expect(await ids(ks, 'samples')).toEqual([sampleId('s/0', datasetNamespace(ks))]);
  });
});

describe('ingest caps and consistency', () => {
  it('refuses a source of 5,000 metadata columns before making or altering anything', async () => {
    const ks = newDataset();
    const columns = Array.from({ length: 5000 }, (_, i) => ({
      name: `c${i}`,
      type: 'int' as const,
    }));
    const source = listedSource({
      description: 'generated',
      entries: [{ sourceKey: 'a', data: Buffer.from([1]), label: 0, metadata: {}, origin: 'test' }],
      labelNames: [],
      columns,
    });
    const err = await ingestDataset(client, {
      dataset: ks,
      source,
      replication: simple,
      concurrency: 1,
      strict: false,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(LoaderError);
    expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
    expect((err as LoaderError).message).toMatch(
      /^this ingest declares 5000 metadata columns for dataset t_\w+, over the cap of 256 .*\(the maxMetadataColumns cap\)/,
    );
    const made = await client.execute(
      'SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?',
      [ks],
      { prepare: true },
    );
    expect(made.rowLength).toBe(0);
  });

  it('applies the caps to the CLI, naming their flags and variables', async () => {
    const root = path.join(work, 'capped');
    await writeJpegs(path.join(root, 'cat'), 1);
    await writeJpegs(path.join(root, 'dog'), 1);
    const ks = newDataset();
    const refused = await runCli(['ingest', ks, '--image-folder', root], {
      ...cliEnv(),
      SCYLLA_LOADER_MAX_LABEL_NAMES: '1',
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'this ingest gives dataset ' +
        `${ks} 2 class names, over the cap of 1 class names per dataset (the maxLabelNames ` +
        'cap, set by --max-label-names (SCYLLA_LOADER_MAX_LABEL_NAMES))',
    );
    const ok = await runCli(
      ['ingest', ks, '--image-folder', root, '--max-label-names', '2'],
      cliEnv(),
    );
    expect(ok.code).toBe(0);
  });

  it('writes at --write-consistency: a level the node cannot give fails naming the setting', async () => {
    const root = path.join(work, 'consistency');
    await writeJpegs(path.join(root, 'cat'), 2);
    const ks = newDataset();
    // One replica (replication 1): TWO cannot be met.
    const failed = await runCli(
      ['ingest', ks, '--image-folder', root, '--write-consistency', 'TWO'],
      cliEnv(),
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('not enough database replicas are alive for consistency TWO');
    expect(failed.stderr).toContain(
      'consistency TWO is set by --write-consistency (SCYLLA_LOADER_WRITE_CONSISTENCY)',
    );
    const ok = await runCli(['ingest', ks, '--image-folder', root], cliEnv());
    expect(ok.code).toBe(0);
    expect((await readDatasetInfo(client, ks)).sampleCount).toBe(2);
  });
});
