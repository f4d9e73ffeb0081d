import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { pack } from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDbClient,
  ingestDataset,
  readDatasetInfo,
  readImageFolder,
  readWebDataset,
  type IngestSource,
} from '../../src/core/index.js';
import { encodeGreyPng } from '../../src/testing/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { runCli } from '../support/runCli.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace, selectAll } from '../support/dbHelpers.js';

const simple = { class: 'SimpleStrategy', replicationFactor: 1 } as const;
const CLASSES = ['circle', 'square', 'stripe'];
const COUNT = 40;
/** Samples in the first shard; the second holds the rest. */
const FIRST_SHARD = 22;

let client: cassandra.Client;
const keyspaces: string[] = [];
let work: string;
let folderRoot: string;
let shards: string[];
/** Members of the second shard, to cut it. */
let secondShardMembers: Array<[string, Buffer]>;
/** The images' `label:sha256` strings, sorted (see {@link sampleMultiset}). */
let expectedMultiset: string[];

function cliEnv(): NodeJS.ProcessEnv {
  const db = testDbConfig();
  return {
    ...dbEnv(db),
  };
}

/** Sample `i`'s caption (its `.txt` member). */
function caption(i: number): string {
  return `a grey ${CLASSES[i % 3]!}, number ${i}`;
}

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function newDataset(): string {
  const ks = uniqueKeyspace();
  keyspaces.push(ks);
  return ks;
}

/** A tar of `members` in order, written to `file`. */
async function writeTar(file: string, members: Array<[string, Buffer]>): Promise<void> {
  const p = pack();
  for (const [name, body] of members) p.entry({ name }, body);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of p as AsyncIterable<Buffer>) chunks.push(chunk);
  await writeFile(file, Buffer.concat(chunks));
}

async function allRows(ks: string, table: string, cols: string): Promise<cassandra.types.Row[]> {
  return selectAll(client, `SELECT ${cols} FROM ${ks}.${table}`);
}

/** The (data, label) pairs of a dataset's samples, as sorted `label:sha256` strings. */
async function sampleMultiset(ks: string): Promise<string[]> {
  return (await allRows(ks, 'samples', 'label, data'))
    .map((r) => `${String(r['label'])}:${sha256(r['data'] as Buffer)}`)
    .sort();
}

async function ingest(ks: string, source: IngestSource) {
  return ingestDataset(client, {
    dataset: ks,
    source,
    replication: simple,
    concurrency: 32,
    strict: false,
  });
}

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  work = await mkdtemp(path.join(os.tmpdir(), 'sl-webdataset-'));
  folderRoot = path.join(work, 'folder');
  const members: Array<Array<[string, Buffer]>> = [[], []];
  expectedMultiset = [];
  for (let i = 0; i < COUNT; i++) {
    const cls = CLASSES[i % 3]!;
    const pixels = new Uint8Array(16 * 16).map((_, p) => (p * 7 + i * 31 + (i % 3) * 50) & 255);
    const png = encodeGreyPng(pixels, 16, 16);
    expectedMultiset.push(`${i % 3}:${sha256(png)}`);
    const key = `s${String(i).padStart(6, '0')}`;
    await mkdir(path.join(folderRoot, cls), { recursive: true });
    await writeFile(path.join(folderRoot, cls, `${key}.png`), png);
    // Brightness is no valid column name: it is stored as column brightness.
    const meta = { Brightness: (i * 31) % 256, even: i % 2 === 0 };
    members[i < FIRST_SHARD ? 0 : 1]!.push(
      [`${key}.png`, png],
      [`${key}.cls`, Buffer.from(cls)],
      [`${key}.txt`, Buffer.from(caption(i))],
      [`${key}.json`, Buffer.from(JSON.stringify(meta))],
    );
  }
  shards = [path.join(work, 'shard-000000.tar'), path.join(work, 'shard-000001.tar')];
  await writeTar(shards[0]!, members[0]!);
  await writeTar(shards[1]!, members[1]!);
  secondShardMembers = members[1]!;
  expectedMultiset.sort();
});

afterAll(async () => {
  for (const ks of keyspaces) await dropKeyspace(client, ks);
  await client?.shutdown();
});

describe('ingest --webdataset', () => {
  it('stores the same samples as the same images in an ImageFolder; a re-ingest changes nothing', async () => {
    const fromFolder = newDataset();
    const fromTars = newDataset();
    const folderSummary = await ingest(fromFolder, await readImageFolder(folderRoot));
    expect(folderSummary.written).toBe(COUNT);

    const source = await readWebDataset([path.join(work, 'shard-{000000..000001}.tar')]);
    expect(source.total).toBe(COUNT);
    expect(source.labelNames).toEqual(CLASSES);
    expect(source.columns).toEqual([
      { name: 'brightness', type: 'int' },
      { name: 'even', type: 'boolean' },
      { name: 'txt', type: 'text' },
    ]);
    const first = await ingest(fromTars, source);
    expect(first).toMatchObject({ total: COUNT, written: COUNT, failed: 0, alreadyPresent: 0 });

    const samples = await sampleMultiset(fromTars);
    expect(samples).toHaveLength(COUNT);
    expect(samples).toEqual(await sampleMultiset(fromFolder));
    expect(samples).toEqual(expectedMultiset);
    const metaCols = 'id, label, source_key, size_bytes, brightness, even, txt';
    const meta = await allRows(fromTars, 'metadata', metaCols);
    expect(meta).toHaveLength((await allRows(fromFolder, 'metadata', 'id')).length);
    const s5 = meta.find((r) => r['source_key'] === 'shard-000000.tar/s000005')!;
    expect([s5['label'], s5['brightness'], s5['even'], s5['txt']]).toEqual([
      2,
      (5 * 31) % 256,
      false,
      caption(5),
    ]);
    const info = await readDatasetInfo(client, fromTars);
    expect(info.labelNames).toEqual(CLASSES);
    expect(info.columns).toEqual({ brightness: 'int', even: 'boolean', txt: 'text' });
    expect(info.sources).toEqual([`webdataset:${shards[0]}(+1 more)`]);

    const rowsOf = async (): Promise<string[]> =>
      [
        ...(await allRows(fromTars, 'metadata', metaCols)).map((r) => JSON.stringify(r)),
        ...(await sampleMultiset(fromTars)),
      ].sort();
    const before = await rowsOf();
    const again = await ingest(fromTars, await readWebDataset(shards));
    expect(again).toMatchObject({ written: 0, alreadyPresent: COUNT, failed: 0 });
    expect(await rowsOf()).toEqual(before);
  });

  it('a truncated shard: the samples before the damage are stored, the damage is skipped', async () => {
    // Each member is a 512-byte header and its body padded to 512 bytes; cut the second
    // shard in the middle of its sixth sample's image.
    const size = (body: Buffer): number => 512 + Math.ceil(body.length / 512) * 512;
    const keep = 5;
    const start = secondShardMembers.slice(0, keep * 4).reduce((n, [, b]) => n + size(b), 0);
    const whole = await readFile(shards[1]!);
    const cut = path.join(work, 'cut', path.basename(shards[1]!));
    await mkdir(path.dirname(cut), { recursive: true });
    await writeFile(cut, whole.subarray(0, start + 512 + 40));

    const ks = newDataset();
    const summary = await ingest(ks, await readWebDataset([shards[0]!, cut]));
    expect(summary).toMatchObject({ written: FIRST_SHARD + keep, failed: 1, alreadyPresent: 0 });
    expect(summary.skipped).toEqual([
      {
        origin: `${cut}:s${String(FIRST_SHARD + keep).padStart(6, '0')}`,
        path: `shard-000001.tar/s${String(FIRST_SHARD + keep).padStart(6, '0')}`,
        reason: expect.stringMatching(
          new RegExp(`^${cut} is damaged in the members of s0000\\d\\d: Unexpected end of data`),
        ),
      },
    ]);
    expect((await readDatasetInfo(client, ks)).sampleCount).toBe(FIRST_SHARD + keep);
  });

  it('two CLI processes, --shard 0/2 and 1/2, ingest a file each into one dataset (CLI)', async () => {
    const ks = newDataset();
    const pattern = path.join(work, 'shard-{000000..000001}.tar');
    const run = (shard: string) =>
      runCli(['ingest', ks, '--webdataset', pattern, '--shard', shard], cliEnv());
    const [a, b] = await Promise.all([run('0/2'), run('1/2')]);
    for (const r of [a, b]) {
      expect(r.stderr).not.toMatch(/error/);
      expect(r.code).toBe(0);
    }
    expect(a.stdout).toMatch(new RegExp(`written ${FIRST_SHARD} .*skipped 0`));
    expect(b.stdout).toMatch(new RegExp(`written ${COUNT - FIRST_SHARD} .*skipped 0`));
    expect(await sampleMultiset(ks)).toEqual(expectedMultiset);
    const info = await readDatasetInfo(client, ks);
    expect(info.labelNames).toEqual(CLASSES);
    expect(info.columns).toEqual({ brightness: 'int', even: 'boolean', txt: 'text' });
  });
});
