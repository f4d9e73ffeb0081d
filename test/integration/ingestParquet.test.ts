import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { parquetWriteFile } from 'hyparquet-writer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDbClient,
  ingestDataset,
  readDatasetInfo,
  readImageFolder,
  readParquet,
  type IngestSource,
} from '../../src/core/index.js';
import { encodeGreyPng } from '../../src/testing/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { runCli } from '../support/runCli.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace, selectAll } from '../support/dbHelpers.js';

const simple = { class: 'SimpleStrategy', replicationFactor: 1 } as const;
const CLASSES = ['ant', 'bee', 'cat'];
const N = 40;

let client: cassandra.Client;
const keyspaces: string[] = [];
let work: string;
/** The images, each with its class index. */
let images: Array<{ png: Buffer; label: number; name: string }>;

function cliEnv(): NodeJS.ProcessEnv {
  const db = testDbConfig();
  return {
    ...dbEnv(db),
  };
}

function newDataset(): string {
  const ks = uniqueKeyspace();
  keyspaces.push(ks);
  return ks;
}

/** A distinct small PNG per index: a grey ramp whose offset and size depend on it. */
function png(i: number): Buffer {
  const side = 6 + (i % 5);
  const pixels = new Uint8Array(side * side).map((_, p) => (p * 7 + i * 13) % 256);
  return encodeGreyPng(pixels, side, side);
}

/**
 * Writes a Parquet file the way Hugging Face datasets stores an image classification split:
 * an `image` struct {bytes, path}, an int64 `label` that the `huggingface` key-value metadata
 * describes as a ClassLabel, in row groups of `rowGroupSize`.
 */
function writeHfParquet(
  file: string,
  rows: Array<{ image: { bytes: Uint8Array; path: string } | null; label: number }>,
  rowGroupSize = 8,
): string {
  const features = { image: { _type: 'Image' }, label: { names: CLASSES, _type: 'ClassLabel' } };
  parquetWriteFile({
    filename: file,
    columnData: [
      { name: 'image', data: rows.map((r) => r.image) },
      { name: 'label', data: rows.map((r) => BigInt(r.label)) },
    ],
    schema: [
      { name: 'root', num_children: 2 },
      { name: 'image', repetition_type: 'OPTIONAL', num_children: 2 },
      { name: 'bytes', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
      { name: 'path', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'OPTIONAL' },
      { name: 'label', type: 'INT64', repetition_type: 'OPTIONAL' },
    ],
    rowGroupSize,
    kvMetadata: [{ key: 'huggingface', value: JSON.stringify({ info: { features } }) }],
  });
  return file;
}

async function allRows(ks: string, table: string, cols: string): Promise<cassandra.types.Row[]> {
  return selectAll(client, `SELECT ${cols} FROM ${ks}.${table}`);
}

/** The dataset's samples as a sorted multiset of `<label>:<sha256 of data>`. */
async function sampleMultiset(ks: string): Promise<string[]> {
  const rows = await allRows(ks, 'samples', 'label, data');
  return rows
    .map((r) => {
      const data = r['data'] as Buffer;
      return `${String(r['label'])}:${createHash('sha256').update(data).digest('hex')}`;
    })
    .sort();
}

async function ingest(dataset: string, source: IngestSource) {
  return ingestDataset(client, {
    dataset,
    source,
    replication: simple,
    concurrency: 32,
    strict: false,
  });
}

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  work = await mkdtemp(path.join(os.tmpdir(), 'sl-ingest-parquet-'));
  images = Array.from({ length: N }, (_, i) => ({
    png: png(i),
    label: i % CLASSES.length,
    name: `${String(i).padStart(3, '0')}.png`,
  }));
});

afterAll(async () => {
  for (const ks of keyspaces) await dropKeyspace(client, ks);
  await client?.shutdown();
});

describe('ingest --parquet', () => {
  it('stores the same samples as the same images in an ImageFolder, and a re-run changes nothing', async () => {
    const root = path.join(work, 'folder');
    for (const img of images) {
      const dir = path.join(root, CLASSES[img.label]!);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, img.name), img.png);
    }
    const parquet = writeHfParquet(
      path.join(work, 'train-00000-of-00001.parquet'),
      images.map((img) => ({ image: { bytes: img.png, path: img.name }, label: img.label })),
    );

    const fromFolder = newDataset();
    const fromParquet = newDataset();
    const folderSummary = await ingest(fromFolder, await readImageFolder(root));
    const parquetSummary = await ingest(fromParquet, await readParquet([parquet]));
    expect(folderSummary).toMatchObject({ written: N, failed: 0 });
    expect(parquetSummary).toMatchObject({ total: N, done: N, written: N, failed: 0 });
    expect(parquetSummary.dataset.sampleCount).toBe(N);

    const expected = await sampleMultiset(fromFolder);
    expect(expected).toHaveLength(N);
    expect(await sampleMultiset(fromParquet)).toEqual(expected);
    const info = await readDatasetInfo(client, fromParquet);
    expect(info.labelNames).toEqual(CLASSES);
    expect(info.sources).toEqual([`parquet:${parquet}`]);
    const keys = (await allRows(fromParquet, 'metadata', 'source_key'))
      .map((r) => String(r['source_key']))
      .sort();
    expect(keys).toEqual(images.map((_, i) => `train-00000-of-00001.parquet:${i}`).sort());

    const again = await ingest(fromParquet, await readParquet([parquet]));
    expect(again).toMatchObject({ written: 0, alreadyPresent: N, failed: 0, bytesWritten: 0 });
    expect(await sampleMultiset(fromParquet)).toEqual(expected);
    expect((await readDatasetInfo(client, fromParquet)).sampleCount).toBe(N);
  });

  it('ingests the rest of a file with a null image and reports that row skipped', async () => {
    const rows = images.slice(0, 10).map((img, i) => ({
      image: i === 6 ? null : { bytes: img.png, path: img.name },
      label: img.label,
    }));
    const file = writeHfParquet(path.join(work, 'holes.parquet'), rows, 4);
    const ks = newDataset();
    const skips: string[] = [];
    const summary = await ingestDataset(client, {
      dataset: ks,
      source: await readParquet([file]),
      replication: simple,
      concurrency: 32,
      strict: false,
      onSkip: (s) => skips.push(`${s.origin}: ${s.reason}`),
    });
    expect(summary).toMatchObject({ written: 9, failed: 1 });
    expect(summary.skipped).toHaveLength(1);
    expect(skips).toEqual([`${file}:row 6: image column image is null`]);
    expect(summary.dataset.sampleCount).toBe(9);
  });

  it('ingests with --parquet, a key column and string labels, in two --shard processes (CLI)', async () => {
    const rows = images.slice(0, 12);
    const file = path.join(work, 'cli.parquet');
    parquetWriteFile({
      filename: file,
      columnData: [
        { name: 'uid', data: rows.map((_, i) => `img-${i}`) },
        { name: 'picture', data: rows.map((r, i) => (i === 5 ? null : r.png)) },
        { name: 'species', data: rows.map((r) => CLASSES[r.label]!) },
        // Not a valid column name: stored as weight_kg.
        { name: 'Weight.KG', data: rows.map((_, i) => i * 0.5) },
      ],
      schema: [
        { name: 'root', num_children: 4 },
        { name: 'uid', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
        { name: 'picture', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
        {
          name: 'species',
          type: 'BYTE_ARRAY',
          converted_type: 'UTF8',
          repetition_type: 'OPTIONAL',
        },
        { name: 'Weight.KG', type: 'DOUBLE', repetition_type: 'OPTIONAL' },
      ],
      rowGroupSize: 3,
    });
    const ks = newDataset();
    const args = ['ingest', ks, '--parquet', file, '--key-column', 'uid'];
    args.push('--label-column', 'species', '--column', 'weight_kg:text', '--concurrency', '4');
    const first = await runCli([...args, '--shard', '0/2'], cliEnv());
    const second = await runCli([...args, '--shard', '1/2'], cliEnv());
    for (const r of [first, second]) expect(r.code, r.stderr).toBe(0);
    // Row groups 0 and 2 (rows 0-2, 6-8) are shard 0's; 1 and 3 (rows 3-5, 9-11) shard 1's.
    expect(first.stdout).toMatch(/6 samples in the source[\s\S]*written 6 .*skipped 0/);
    expect(second.stdout).toMatch(/written 5 .*skipped 1/);
    expect(second.stdout).toContain('image column picture is null');
    expect(second.stderr).toContain(`(${file}:row 5)`);

    const info = await readDatasetInfo(client, ks);
    expect(info.labelNames).toEqual(CLASSES);
    expect(info.columns).toEqual({ weight_kg: 'text' });
    expect(info.sampleCount).toBe(11);
    const stored = (await allRows(ks, 'metadata', 'source_key, label, weight_kg'))
      .map((r) => `${String(r['source_key'])} ${String(r['label'])} ${String(r['weight_kg'])}`)
      .sort();
    const expected = rows
      .map((r, i) => `img-${i} ${r.label} ${i * 0.5}`)
      .filter((_, i) => i !== 5)
      .sort();
    expect(stored).toEqual(expected);

    const notParquet = path.join(work, 'notes.parquet');
    await writeFile(notParquet, 'not parquet');
    const bad = await runCli(['ingest', ks, '--parquet', notParquet], cliEnv());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(new RegExp(`^error: ${notParquet} is not a Parquet file`));
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });
});
