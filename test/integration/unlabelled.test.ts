import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { parquetWriteFile } from 'hyparquet-writer';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError, LoaderClient, type IngestSampleInput } from '../../src/client/index.js';
import { createDbClient, datasetNamespace, sampleId } from '../../src/core/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { encodeGreyPng } from '../../src/testing/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { dropKeyspace, selectAll, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import { startTestServer } from '../support/loaderServer.js';
import { runCli } from '../support/runCli.js';

/** Samples of each dataset. */
const N = 12;

let db: cassandra.Client;
let server: LoaderServer;
let client: LoaderClient;
let work: string;
const datasets: string[] = [];

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  server = await startTestServer({ shutdownGraceMs: 0 });
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
  work = await mkdtemp(path.join(os.tmpdir(), 'sl-unlabelled-'));
});

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  for (const ks of datasets) await dropKeyspace(db, ks);
  await db?.shutdown();
});

function newDataset(): string {
  const ks = uniqueKeyspace();
  datasets.push(ks);
  return ks;
}

/** A distinct small PNG per index. */
function png(i: number): Buffer {
  const side = 5 + (i % 4);
  return encodeGreyPng(
    new Uint8Array(side * side).map((_, p) => (p * 5 + i * 11) % 256),
    side,
    side,
  );
}

function caption(i: number): string {
  return `photo number ${i} of a grey ramp`;
}

async function ingestCli(ks: string, ...args: string[]): Promise<string> {
  const run = await runCli(['ingest', ks, ...args], dbEnv(testDbConfig()));
  expect(run.stderr).not.toMatch(/error/);
  expect(run.code).toBe(0);
  expect(run.stdout).toMatch(new RegExp(`written ${N} .*skipped 0`));
  expect(run.stdout).toMatch(
    new RegExp(`now holds ${N} samples, .* 0 classes, ${N} samples without a label`),
  );
  return run.stdout;
}

/**
 * What every unlabelled dataset must do: describe as `N` samples without a label, stream each
 * sample once with label -1, refuse a balanced split naming the dataset (INVALID_ARGUMENT),
 * and make a natural split whose parts stream every sample once between them.
 */
async function expectUnlabelled(ks: string, keys: readonly string[]): Promise<void> {
  const ns = datasetNamespace(ks);
  const wanted = keys.map((k) => sampleId(k, ns)).sort();

  const described = await client.describeDataset(ks);
  expect(described.labelNames).toEqual([]);
  expect(described.classCounts).toEqual({ [-1]: N });

  const streamed = async (split: string): Promise<{ ids: string[]; labels: number[] }> => {
    const ids: string[] = [];
    const labels: number[] = [];
    for await (const b of client.streamBatches({ dataset: ks, split, batchSize: 5, seed: 3 })) {
      ids.push(...b.ids);
      labels.push(...b.labels);
    }
    return { ids, labels };
  };
  const all = await streamed('all');
  expect(all.ids.slice().sort()).toEqual(wanted);
  expect(all.labels).toEqual(keys.map(() => -1));

  const refused = await client
    .createSplits({
      dataset: ks,
      name: 'bal',
      parts: { train: 1, val: 1 },
      classTargets: 'balanced',
    })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(refused).toBeInstanceOf(ClientError);
  expect((refused as ClientError).codeName).toBe('INVALID_ARGUMENT');
  expect((refused as ClientError).message).toContain(
    `dataset ${ks} is unlabelled: none of its ${N} samples (after the filters) has a label, so a ` +
      'balanced split',
  );

  const set = await client.createSplits({ dataset: ks, name: 'nat', parts: { train: 3, val: 1 } });
  expect(set.parts.map((p) => p.size).reduce((a, b) => a + b, 0)).toBe(N);
  const train = await streamed('nat/train');
  const val = await streamed('nat/val');
  expect([...train.ids, ...val.ids].sort()).toEqual(wanted);
  expect([...train.labels, ...val.labels].every((l) => l === -1)).toBe(true);
}

/** The stored (label, label blob) of every sample: all null for an unlabelled dataset. */
async function storedLabels(ks: string): Promise<unknown[]> {
  const rows = await selectAll(db, `SELECT label, label_blob FROM ${ks}.samples`);
  return [...new Set(rows.map((r) => JSON.stringify([r['label'], r['label_blob']])))];
}

describe('unlabelled datasets', () => {
  it('an image folder without class folders ingests unlabelled (CLI); a CLI balanced split is refused', async () => {
    const root = path.join(work, 'flat');
    await mkdir(root);
    const keys = Array.from({ length: N }, (_, i) => `img-${String(i).padStart(2, '0')}.png`);
    for (const [i, k] of keys.entries()) await writeFile(path.join(root, k), png(i));
    const ks = newDataset();
    const report = await ingestCli(ks, '--image-folder', root);
    expect(report).toContain(
      `unlabelled: ${root} has files and no class folders; samples are stored without a label`,
    );
    expect(await storedLabels(ks)).toEqual([JSON.stringify([null, null])]);
    await expectUnlabelled(ks, keys);

    const split = await runCli(
      ['splits', 'create', ks, 'cli', '--parts', 'a=1,b=1', '--balanced'],
      dbEnv(testDbConfig()),
    );
    expect(split.code).toBe(1);
    expect(split.stderr).toMatch(
      new RegExp(
        `^error: dataset ${ks} is unlabelled: none of its ${N} samples .*split it without class targets`,
        'm',
      ),
    );
    const describe = await runCli(['describe', ks], dbEnv(testDbConfig()));
    expect(describe.stdout).toMatch(/classes +0: \n/);
    expect(describe.stdout).toContain(`unlabelled    ${N} samples without a label`);
  });

  it('--ignore-labels ingests a tree of folders that are not classes as unlabelled (CLI)', async () => {
    const root = path.join(work, 'nested');
    const keys = Array.from({ length: N }, (_, i) => `part-${i % 3}/x${i}.png`);
    for (const [i, k] of keys.entries()) {
      await mkdir(path.dirname(path.join(root, k)), { recursive: true });
      await writeFile(path.join(root, k), png(i));
    }
    const ks = newDataset();
    const report = await ingestCli(ks, '--image-folder', root, '--ignore-labels');
    expect(report).toContain('unlabelled: labels ignored (--ignore-labels)');
    await expectUnlabelled(ks, keys);
  });

  it('a manifest without label columns ingests unlabelled, its other columns as metadata (CLI)', async () => {
    const dir = path.join(work, 'manifest');
    await mkdir(dir);
    const keys = Array.from({ length: N }, (_, i) => `m${i}.png`);
    for (const [i, k] of keys.entries()) await writeFile(path.join(dir, k), png(i));
    const file = path.join(dir, 'captions.csv');
    await writeFile(file, ['path,caption', ...keys.map((k, i) => `${k},${caption(i)}`)].join('\n'));
    const ks = newDataset();
    await ingestCli(ks, '--manifest', file);
    const rows = await selectAll(db, `SELECT source_key, caption FROM ${ks}.metadata`);
    expect(new Map(rows.map((r) => [r['source_key'], r['caption']]))).toEqual(
      new Map(keys.map((k, i) => [k, caption(i)])),
    );
    await expectUnlabelled(ks, keys);
  });

  it('a WebDataset of image + .txt + .json without .cls ingests unlabelled (CLI)', async () => {
    const p = pack();
    for (let i = 0; i < N; i++) {
      const key = `s${String(i).padStart(3, '0')}`;
      p.entry({ name: `${key}.png` }, png(i));
      p.entry({ name: `${key}.txt` }, caption(i));
      p.entry({ name: `${key}.json` }, JSON.stringify({ width: 100 + i, score: i / 10 }));
    }
    p.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of p as AsyncIterable<Buffer>) chunks.push(chunk);
    const tar = path.join(work, 'pairs.tar');
    await writeFile(tar, Buffer.concat(chunks));
    const ks = newDataset();
    const report = await ingestCli(ks, '--webdataset', tar);
    expect(report).toContain(
      'unlabelled: no sample has a .cls or .label member, a .json field "label" or a label ' +
        'blob member (--label-field <name> names another field)',
    );
    const keys = Array.from({ length: N }, (_, i) => `pairs.tar/s${String(i).padStart(3, '0')}`);
    const rows = await selectAll(db, `SELECT source_key, txt, width, score FROM ${ks}.metadata`);
    expect(new Map(rows.map((r) => [r['source_key'], [r['txt'], r['width'], r['score']]]))).toEqual(
      new Map(keys.map((k, i) => [k, [caption(i), 100 + i, i / 10]])),
    );
    await expectUnlabelled(ks, keys);
  });

  it('Parquet without a label column ingests unlabelled (CLI)', async () => {
    const file = path.join(work, 'pairs.parquet');
    parquetWriteFile({
      filename: file,
      columnData: [
        { name: 'image', data: Array.from({ length: N }, (_, i) => new Uint8Array(png(i))) },
        { name: 'caption', data: Array.from({ length: N }, (_, i) => caption(i)) },
      ],
      schema: [
        { name: 'root', num_children: 2 },
        { name: 'image', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
        {
          name: 'caption',
          type: 'BYTE_ARRAY',
          converted_type: 'UTF8',
          repetition_type: 'OPTIONAL',
        },
      ],
      rowGroupSize: 5,
    });
    const ks = newDataset();
    const report = await ingestCli(ks, '--parquet', file);
    expect(report).toContain(
      `unlabelled: ${file} has no label column (looked for label, labels, class, target; ` +
        '--label-column <name> names another)',
    );
    await expectUnlabelled(
      ks,
      Array.from({ length: N }, (_, i) => `pairs.parquet:${i}`),
    );
  });

  it('IngestSamples through the TS SDK: samples without labels ingest; a labelled one among them is refused', async () => {
    const ks = newDataset();
    const sent: IngestSampleInput[] = Array.from({ length: N }, (_, i) => ({
      sourceKey: `sdk/${i}`,
      data: png(i),
      metadata: { caption: caption(i) },
    }));
    const summary = await client.ingest(ks, sent, { columns: { caption: 'text' } });
    expect(summary).toMatchObject({ written: N, skipped: 0 });
    expect(await storedLabels(ks)).toEqual([JSON.stringify([null, null])]);
    await expectUnlabelled(
      ks,
      sent.map((s) => s.sourceKey),
    );

    // A call is unlabelled or labelled as its first sample says.
    const mixed = newDataset();
    const err = await client
      .ingest(mixed, [
        { sourceKey: 'a', data: png(0) },
        { sourceKey: 'b', data: png(1), label: 2 },
      ])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).codeName).toBe('INVALID_ARGUMENT');
    expect((err as ClientError).message).toContain(
      `sample "b" in request 1 of this call has a label or a label blob, but this call's ` +
        'first sample had neither',
    );
    // And a labelled call that lost a label is still refused, not stored unlabelled.
    const lost = await client
      .ingest(newDataset(), [
        { sourceKey: 'a', data: png(0), label: 1 },
        { sourceKey: 'b', data: png(1) },
      ])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((lost as ClientError).message).toContain(
      `sample "b" in request 1 of this call has neither a label nor a label blob, but this ` +
        "call's first sample had one",
    );
  });

  it('a dataset with labelled and unlabelled samples refuses a balanced split until a label filter leaves the unlabelled out', async () => {
    const ks = newDataset();
    const labelled = Array.from({ length: 8 }, (_, i) => ({
      sourceKey: `l/${i}`,
      data: png(i),
      label: i % 2,
    }));
    const bare = Array.from({ length: 4 }, (_, i) => ({ sourceKey: `u/${i}`, data: png(i) }));
    await client.ingest(ks, labelled);
    await client.ingest(ks, bare);
    expect((await client.describeDataset(ks)).classCounts).toEqual({ [-1]: 4, 0: 4, 1: 4 });
    const parts = { a: 1, b: 1 };
    const refused = await client
      .createSplits({ dataset: ks, name: 'bal', parts, classTargets: 'balanced' })
      .then(
        () => undefined,
        (e: unknown) => e as ClientError,
      );
    expect(refused?.codeName).toBe('INVALID_ARGUMENT');
    expect(refused?.message).toContain(
      `dataset ${ks}: 4 of its 12 samples (after the filters) have no label, and a balanced ` +
        'split',
    );
    const set = await client.createSplits({
      dataset: ks,
      name: 'bal',
      parts,
      classTargets: 'balanced',
      filters: [{ column: 'label', min: 0 }],
    });
    expect(set.parts.map((p) => p.size).reduce((x, y) => x + y, 0)).toBe(8);
  });
});
