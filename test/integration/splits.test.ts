import type cassandra from 'cassandra-driver';
import { stringify } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createDbClient,
  createSplitIdsCache,
  createSplitSet,
  type CreateSplitSetRequest,
  readSplitInput,
  listSplitSets,
  readPartIds,
  readSplitSetInfo,
  resolveSplit,
} from '../../src/core/index.js';
import { ingestPathologyDataset } from '../support/pathologyDataset.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

let client: cassandra.Client;
let ks: string;
let tiles: Awaited<ReturnType<typeof ingestPathologyDataset>>;
const idList = (b: Buffer): string[] =>
  Array.from({ length: b.length / 16 }, (_, i) => stringify(b, i * 16));

const request = (change: Partial<CreateSplitSetRequest> = {}): CreateSplitSetRequest => ({
  dataset: ks,
  name: 'main',
  parts: [
    ['train', 7],
    ['val', 2],
    ['test', 1],
  ],
  folds: 0,
  groupBy: ['patient_id'],
  classTargets: { mode: 'balanced' },
  filters: [],
  seed: 1n,
  newVersion: false,
  // A couple of dozen patients are too few to split the rare label 7:2:1 within 1%; the
  // targets' accuracy is the unit tests' subject, storage is this file's.
  allowShortfall: true,
  ...change,
});

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  tiles = await ingestPathologyDataset(client, ks, 24);
});

afterAll(async () => {
  await dropKeyspace(client, ks);
  await client.shutdown();
});

describe('split sets in the database', () => {
  it('round trip: stored parts hold exactly the ids computed, groups whole, counts as reported', async () => {
    const info = await createSplitSet(client, request());
    expect(info.version).toBe(1);
    const patientOf = new Map(tiles.map((t) => [t.id, t.patient]));
    const labelOf = new Map(tiles.map((t) => [t.id, t.label]));
    const owner = new Map<number, string>();
    for (const part of info.parts) {
      const ids = idList(await readPartIds(client, ks, info, part.name));
      expect(ids).toHaveLength(part.size);
      expect(new Set(ids).size).toBe(part.size);
      for (const id of ids) {
        const patient = patientOf.get(id)!;
        expect(owner.get(patient) ?? part.name).toBe(part.name);
        owner.set(patient, part.name);
      }
      const counts: Record<string, number> = {};
      for (const id of ids) counts[labelOf.get(id)!] = (counts[labelOf.get(id)!] ?? 0) + 1;
      expect(counts).toEqual(part.classCounts);
    }
    const again = await readSplitSetInfo(client, ks, 'main');
    expect(again).toEqual(info);
    expect((await listSplitSets(client, ks)).map((s) => `${s.name}@${s.version}`)).toEqual([
      'main@1',
    ]);
  });

  it('refuses an existing name unless a new version is asked for', async () => {
    await expect(createSplitSet(client, request())).rejects.toThrow(/already exists \(version 1\)/);
    const v2 = await createSplitSet(client, request({ newVersion: true, seed: 2n }));
    expect(v2.version).toBe(2);
    expect((await readSplitSetInfo(client, ks, 'main')).version).toBe(2);
    expect((await readSplitSetInfo(client, ks, 'main', 1)).seed).toBe(1n);
    expect(v2.contentHash).not.toBe((await readSplitSetInfo(client, ks, 'main', 1)).contentHash);
  });

  it('the same seed gives the same parts', async () => {
    const a = await createSplitSet(client, request({ name: 'same-a', seed: 9n }));
    const b = await createSplitSet(client, request({ name: 'same-b', seed: 9n }));
    for (const part of ['train', 'val', 'test']) {
      expect(await readPartIds(client, ks, b, part)).toEqual(
        await readPartIds(client, ks, a, part),
      );
    }
  });

  it('filters select exactly what they say', async () => {
    const input = await readSplitInput(client, ks, {
      groupBy: ['patient_id'],
      filters: [
        { column: 'slide', in: ['70', '71', '120'] },
        { column: 'x', min: 1000, max: 30_000 },
      ],
    });
    const want = tiles
      .filter((t) => ['70', '71', '120'].includes(String(t.slide)) && t.x >= 1000 && t.x <= 30_000)
      .map((t) => t.id)
      .sort();
    expect(idList(input.ids)).toEqual(want);
    const eq = await readSplitInput(client, ks, {
      groupBy: [],
      filters: [{ column: 'patient_id', equals: 'p0003' }],
    });
    expect(eq.count).toBe(tiles.filter((t) => t.patient === 3).length);
    expect(eq.groupCount).toBe(eq.count);
    await expect(readSplitInput(client, ks, { groupBy: ['nope'], filters: [] })).rejects.toThrow(
      /has no metadata column nope; its columns: label, patient_id/,
    );
    await expect(
      readSplitInput(client, ks, { groupBy: [], filters: [{ column: 'patient_id', min: 1 }] }),
    ).rejects.toThrow(/range filter needs a numeric column/);
  });

  it('k folds are disjoint, cover the filtered set, and stream as train-i / val-i', async () => {
    const info = await createSplitSet(
      client,
      request({ name: 'cv', parts: [], folds: 4, classTargets: { mode: 'natural' } }),
    );
    const folds = await Promise.all(info.parts.map((p) => readPartIds(client, ks, info, p.name)));
    const all = folds.flatMap(idList);
    expect(new Set(all).size).toBe(all.length);
    expect([...all].sort()).toEqual(tiles.map((t) => t.id).sort());
    const cache = createSplitIdsCache(1 << 30);
    const train1 = await resolveSplit(client, cache, ks, 'cv/train-1');
    expect(idList(train1.ids)).toEqual([
      ...idList(folds[0]!),
      ...idList(folds[2]!),
      ...idList(folds[3]!),
    ]);
    const val1 = await resolveSplit(client, cache, ks, 'cv@1/val-1');
    expect(val1.ids).toEqual(folds[1]);
    await expect(resolveSplit(client, cache, ks, 'cv/val-4')).rejects.toThrow(/has 4 folds/);
    await expect(resolveSplit(client, cache, ks, 'cv/nope')).rejects.toThrow(/has no part nope/);
    await expect(resolveSplit(client, cache, ks, 'ghost/train')).rejects.toThrow(/does not exist/);
  });

  it('a split set killed before its info row is invisible', async () => {
    // The real client, with the info row's insert failing as if the process died there.
    const crashing = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'execute') return Reflect.get(target, prop, receiver);
        return async (query: string, params: unknown[], opts: unknown) => {
          if (query.includes('split_sets') && query.startsWith('INSERT')) throw new Error('killed');
          return target.execute(query, params as never, opts as never);
        };
      },
    });
    await expect(createSplitSet(crashing, request({ name: 'half' }))).rejects.toThrow('killed');
    const chunks = await client.execute(`SELECT name FROM ${ks}.split_chunks`);
    expect(chunks.rows.some((r) => r['name'] === 'half')).toBe(true); // the chunks were written
    await expect(readSplitSetInfo(client, ks, 'half')).rejects.toThrow(/does not exist/);
    expect((await listSplitSets(client, ks)).some((s) => s.name === 'half')).toBe(false);
    const done = await createSplitSet(client, request({ name: 'half' }));
    expect(done.version).toBe(1);
  });
});
