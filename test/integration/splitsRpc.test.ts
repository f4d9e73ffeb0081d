import { EventEmitter } from 'node:events';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type cassandra from 'cassandra-driver';
import { stringify } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/index.js';
import { LoaderClient } from '../../src/client/index.js';
import type { CreateSplitsOptions } from '../../src/client/index.js';
import type { SplitSet } from '../../src/client/index.js';
import type { CreateSplitsRequest__Output } from '../../src/proto/index.js';
import type { CreateSplitsResponse } from '../../src/proto/index.js';
import { loadLoaderProto } from '../../src/testing/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import {
  createDbClient,
  ingestDataset,
  readManifest,
  datasetNamespace,
  sampleId,
  listSplitSets,
  readPartIds,
  readSplitSetInfo,
} from '../../src/core/index.js';
import { createCreateSplitsHandler } from '../../src/testing/index.js';
import type { ServerContext } from '../../src/testing/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { runCli } from '../support/runCli.js';
import { syntheticPathology, type Tile } from '../support/syntheticPathology.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

const PATIENTS = 12;
let db: cassandra.Client;
let ks: string;
let server: LoaderServer;
let client: LoaderClient;
/** Tile of each sample id. */
let tileOf: Map<string, Tile>;
const tiles = syntheticPathology(PATIENTS, 7);

/**
 * Ingests the synthetic pathology tiles through the real manifest ingest: tiny files, label
 * names normal/tumor, and metadata columns patient_id (text), slide, x, y (int).
 */
async function ingestPathology(dataset: string): Promise<Map<string, Tile>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-splits-'));
  await mkdir(path.join(dir, 'tiles'));
  const lines = ['path,label,patient_id,slide,x,y'];
  const ns = datasetNamespace(dataset);
  const byId = new Map<string, Tile>();
  await Promise.all(
    tiles.map(async (t, i) => {
      const key = `tiles/${i}.bin`;
      await writeFile(path.join(dir, key), `tile-${i}`);
      byId.set(sampleId(key, ns), t);
    }),
  );
  tiles.forEach((t, i) => {
    const label = t.label === 1 ? 'tumor' : 'normal';
    lines.push(
      `tiles/${i}.bin,${label},p${String(t.patient).padStart(3, '0')},${t.slide},${t.x},${t.y}`,
    );
  });
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(db, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv')),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 64,
    strict: true,
  });
  return byId;
}

function cliEnv(): NodeJS.ProcessEnv {
  const cfg = testDbConfig();
  return {
    ...dbEnv(cfg),
  };
}

/** The stored ids of a part, as UUID strings in stored order. */
async function storedIds(set: string, part: string, version?: number): Promise<string[]> {
  const info = await readSplitSetInfo(db, ks, set, version);
  const ids = await readPartIds(db, ks, info, part);
  return Array.from({ length: ids.length / 16 }, (_, i) => stringify(ids, i * 16));
}

/** Every id one epoch of `split` delivers. */
async function streamedIds(split: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const b of client.streamBatches({ dataset: ks, split, batchSize: 128, seed: 5 })) {
    ids.push(...b.ids);
  }
  return ids;
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (err) {
    expect(err).toBeInstanceOf(ClientError);
    return (err as ClientError).codeName;
  }
}

const sorted = (ids: Iterable<string>): string[] => [...ids].sort();

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  tileOf = await ingestPathology(ks);
  server = await startTestServer();
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
});

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  if (ks) await dropKeyspace(db, ks);
  await db?.shutdown();
});

describe('split sets over gRPC', () => {
  let main: SplitSet;

  it('CreateSplits returns the parts, whole patients per part, every sample kept', async () => {
    main = await client.createSplits({
      dataset: ks,
      name: 'main',
      parts: { train: 8, val: 2 },
      groupBy: 'patient_id',
      seed: 1,
      // Natural targets keep every sample; with a few dozen patients per-label counts cannot
      // all land within 1%, which would otherwise be an error.
      allowShortfall: true,
    });
    expect(main).toMatchObject({ name: 'main', version: 1, folds: 0, seed: 1n });
    expect(main.parts.map((p) => p.name)).toEqual(['train', 'val']);
    expect(main.parts.reduce((a, p) => a + p.size, 0)).toBe(tiles.length);
    for (const p of main.parts) {
      const counted = Object.values(p.classCounts).reduce((a, b) => a + b, 0);
      expect(counted).toBe(p.size);
      expect(Object.keys(p.targets).sort()).toEqual(['0', '1']);
    }
    expect(main.parts[0]!.size).toBeGreaterThan(main.parts[1]!.size);
    expect(main.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(main.params).toMatchObject({ groupBy: ['patient_id'], folds: 0 });
    expect(Math.abs(main.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(main.streamableSplits).toEqual(['main@1/train', 'main@1/val']);

    // No patient in two parts; the stored ids are the part's sizes.
    const partOfPatient = new Map<number, string>();
    for (const p of main.parts) {
      const ids = await storedIds('main', p.name);
      expect(ids).toHaveLength(p.size);
      for (const id of ids) {
        const patient = tileOf.get(id)!.patient;
        expect(partOfPatient.get(patient) ?? p.name).toBe(p.name);
        partOfPatient.set(patient, p.name);
      }
    }
    expect(partOfPatient.size).toBe(PATIENTS);
  });

  it('ListSplits and GetSplit return the stored set', async () => {
    const listed = await client.listSplits(ks);
    expect(listed.find((s) => s.name === 'main' && s.version === 1)).toEqual(main);
    expect(await client.getSplit({ dataset: ks, name: 'main' })).toEqual(main);
    expect(await client.getSplit({ dataset: ks, name: 'main', version: 1 })).toEqual(main);
    expect(await codeOf(client.getSplit({ dataset: ks, name: 'main', version: 9 }))).toBe(
      'NOT_FOUND',
    );
    expect(await codeOf(client.getSplit({ dataset: ks, name: 'nope' }))).toBe('NOT_FOUND');
    expect(await codeOf(client.getSplit({ dataset: ks, name: 'Bad Name' }))).toBe(
      'INVALID_ARGUMENT',
    );
    expect(await codeOf(client.listSplits(uniqueKeyspace()))).toBe('NOT_FOUND');
    expect(await codeOf(client.listSplits('Bad-Name'))).toBe('INVALID_ARGUMENT');
  });

  it('the same name again is ALREADY_EXISTS; with newVersion it becomes version 2', async () => {
    const again = {
      dataset: ks,
      name: 'main',
      parts: { train: 8, val: 2 },
      groupBy: 'patient_id',
      allowShortfall: true,
    };
    const err = await client.createSplits({ ...again, seed: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).codeName).toBe('ALREADY_EXISTS');
    expect((err as ClientError).details).toMatch(/already exists \(version 1\).*new version/);

    const v2 = await client.createSplits({ ...again, seed: 2, newVersion: true });
    expect(v2.version).toBe(2);
    expect(v2.contentHash).not.toBe(main.contentHash);
    const listed = (await client.listSplits(ks)).filter((s) => s.name === 'main');
    expect(listed.map((s) => s.version)).toEqual([2, 1]);
    expect((await client.getSplit({ dataset: ks, name: 'main' })).version).toBe(2);
  });

  it('StreamBatches on set/part delivers exactly that part; set@1/part the older version', async () => {
    const train = await streamedIds('main/train');
    expect(train).toHaveLength(new Set(train).size);
    expect(sorted(train)).toEqual(sorted(await storedIds('main', 'train')));

    const v1val = await streamedIds('main@1/val');
    expect(sorted(v1val)).toEqual(sorted(await storedIds('main', 'val', 1)));
    expect(v1val).toHaveLength(main.parts[1]!.size);
  });

  it('k folds: disjoint, covering, and train-i / val-i stream the right unions', async () => {
    const cv = await client.createSplits({
      dataset: ks,
      name: 'cv',
      folds: 3,
      groupBy: ['patient_id'],
      seed: 3,
      // Natural targets keep every sample; with a few dozen patients per-label counts cannot
      // all land within 1%, which would otherwise be an error.
      allowShortfall: true,
    });
    expect(cv.parts.map((p) => p.name)).toEqual(['fold-0', 'fold-1', 'fold-2']);
    const folds = await Promise.all(cv.parts.map((p) => storedIds('cv', p.name)));
    const union = folds.flat();
    expect(new Set(union).size).toBe(tiles.length);
    expect(union).toHaveLength(tiles.length);

    expect(sorted(await streamedIds('cv/val-0'))).toEqual(sorted(folds[0]!));
    expect(sorted(await streamedIds('cv/train-0'))).toEqual(sorted([...folds[1]!, ...folds[2]!]));
    expect(sorted(await streamedIds('cv@1/train-2'))).toEqual(sorted([...folds[0]!, ...folds[1]!]));
  });

  it('DescribeDataset lists the streamable splits of the latest versions', async () => {
    const described = await client.describeDataset(ks);
    expect(described.splits).toEqual(
      expect.arrayContaining([
        'all',
        'main/train',
        'main/val',
        'cv/fold-0',
        'cv/fold-2',
        'cv/train-0',
        'cv/val-2',
      ]),
    );
    expect(described.splits[0]).toBe('all');
    expect(described.splits.filter((s) => s.startsWith('main/'))).toEqual([
      'main/train',
      'main/val',
    ]);
  });

  it('filters select exactly what they say', async () => {
    const patients = ['p001', 'p004', 'p007'];
    const set = await client.createSplits({
      dataset: ks,
      name: 'filtered',
      parts: { a: 1, b: 1 },
      allowShortfall: true,
      filters: [
        { column: 'patient_id', in: patients },
        { column: 'x', min: 10_000, max: 40_000 },
      ],
      seed: 4,
    });
    const want = [...tileOf]
      .filter(
        ([, t]) =>
          patients.includes(`p${String(t.patient).padStart(3, '0')}`) &&
          t.x >= 10_000 &&
          t.x <= 40_000,
      )
      .map(([id]) => id);
    const got = [...(await storedIds('filtered', 'a')), ...(await storedIds('filtered', 'b'))];
    expect(sorted(got)).toEqual(sorted(want));
    expect(set.parts.reduce((a, p) => a + p.size, 0)).toBe(want.length);
  });

  it('gives NOT_FOUND for an unknown part or set, INVALID_ARGUMENT for bad requests', async () => {
    expect(await codeOf(streamedIds('main/nope'))).toBe('NOT_FOUND');
    expect(await codeOf(streamedIds('nope/train'))).toBe('NOT_FOUND');
    expect(await codeOf(streamedIds('main/train-0'))).toBe('NOT_FOUND');
    expect(await codeOf(streamedIds('cv/train-3'))).toBe('NOT_FOUND');

    const base = { dataset: ks, name: 'bad', seed: 1 };
    const bad: CreateSplitsOptions[] = [
      { ...base, parts: { 'Not A Name': 1 } },
      { ...base, parts: { train: 1, 'train-0': 1 } },
      { ...base },
      { ...base, parts: { a: 1 }, folds: 3 },
      { ...base, folds: 1 },
      { ...base, parts: { a: 1 }, filters: [{ column: 'nope', equals: 'x' }] },
      {
        ...base,
        parts: { a: 1 },
        filters: [{ column: 'patient_id', min: 1 }],
      },
      { ...base, parts: { a: 1 }, groupBy: 'no_such_column' },
      { ...base, parts: { a: 1 }, classTargets: { ratios: { 0: 1, 7: 1 } } },
      { ...base, dataset: 'Bad-Name', parts: { a: 1 } },
    ];
    for (const req of bad) {
      expect(await codeOf(client.createSplits(req)), JSON.stringify(req)).toBe('INVALID_ARGUMENT');
    }
    // Mistakes the core let through before its one validator: refused before any scan, with
    // the field named.
    const caught: Array<[CreateSplitsOptions, RegExp]> = [
      [
        { ...base, parts: { a: 1 }, filters: [{ column: 'x', min: 5, max: 1 }] },
        /filters\.0\.min: range min 5 is above max 1/,
      ],
      [{ ...base, parts: { a: 1, b: 0 } }, /parts\.1\.1: part b needs a positive weight, got 0/],
      [
        { ...base, parts: { a: 1 }, classTargets: { ratios: { 0: 1, 1: 0 } } },
        /classTargets\.ratios\.1: class ratio of label 1 must be positive/,
      ],
      [
        { ...base, parts: { a: 1 }, groupBy: ['patient_id', 'patient_id'] },
        /groupBy\.1: group-by column patient_id is named twice/,
      ],
      [{ ...base, folds: 1 }, /folds: k-fold needs at least 2 folds/],
    ];
    for (const [req, details] of caught) {
      const err = await client.createSplits(req).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(req)).toBeInstanceOf(ClientError);
      expect((err as ClientError).codeName).toBe('INVALID_ARGUMENT');
      expect((err as ClientError).details).toMatch(/^invalid request: /);
      expect((err as ClientError).details).toMatch(details);
    }
    expect(
      await codeOf(client.createSplits({ ...base, dataset: uniqueKeyspace(), parts: { a: 1 } })),
    ).toBe('NOT_FOUND');

    // What the SDK refuses itself, a raw client can still send: the server refuses it too.
    const Raw = loadLoaderProto().scylla_loader.v1.LoaderService;
    const raw = new Raw(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure());
    try {
      const rawCode = (req: object): Promise<number> =>
        new Promise((resolve) =>
          raw.createSplits(req, (err) => resolve(err ? err.code : grpc.status.OK)),
        );
      for (const req of [
        { dataset: ks, name: 'bad', parts: [{ name: 'a', weight: 0 }] },
        { dataset: ks, name: 'bad', parts: [{ name: 'a', weight: Infinity }] },
        { dataset: ks, name: 'bad', parts: [{ name: 'a', weight: 1 }], filters: [{ column: 'x' }] },
        {
          dataset: ks,
          name: 'bad',
          parts: [{ name: 'a', weight: 1 }],
          classTargetMode: 'CLASS_TARGET_MODE_BALANCED',
          classRatios: { 0: 1 },
        },
        // Two parts of one name: a map in the SDK cannot even say it.
        {
          dataset: ks,
          name: 'bad',
          parts: [
            { name: 'a', weight: 1 },
            { name: 'a', weight: 2 },
          ],
        },
      ]) {
        expect(await rawCode(req)).toBe(grpc.status.INVALID_ARGUMENT);
      }
    } finally {
      raw.close();
    }
    expect((await listSplitSets(db, ks)).some((s) => s.name === 'bad')).toBe(false);
  });

  it('impossible targets name what is possible; allowShortfall stores the best feasible', async () => {
    const req = {
      dataset: ks,
      name: 'bal',
      parts: { train: 7, val: 2, test: 1 },
      groupBy: 'patient_id',
      classTargets: 'balanced' as const,
      seed: 1,
    };
    const err = await client.createSplits(req).catch((e: unknown) => e);
    expect((err as ClientError).codeName).toBe('INVALID_ARGUMENT');
    expect((err as ClientError).details).toMatch(/cannot be met.*best found/);
    const set = await client.createSplits({ ...req, allowShortfall: true });
    expect(set.worstDeviation).toBeGreaterThan(0.01);
    expect(set.params).toMatchObject({ allowShortfall: true });
  });

  it('a cancelled CreateSplits stops before the metadata scan and stores nothing', async () => {
    // The handler with a real database client that counts metadata reads, and a call that is
    // cancelled as soon as it starts (as grpc-js reports a client's cancel or a deadline).
    let metadataReads = 0;
    const counting = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === 'execute') {
          return (query: string, ...rest: unknown[]) => {
            if (query.includes('.metadata')) metadataReads++;
            return (target.execute as (...a: unknown[]) => unknown).call(target, query, ...rest);
          };
        }
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const ctx = {
      ...server.context,
      paths: [{ name: 'primary', client: counting }],
    } as ServerContext;
    const handler = createCreateSplitsHandler(ctx);
    const call = Object.assign(new EventEmitter(), {
      request: {
        dataset: ks,
        name: 'cancelled',
        parts: [{ name: 'a', weight: 1 }],
        folds: 0,
        groupBy: [],
        classTargetMode: 'CLASS_TARGET_MODE_UNSPECIFIED',
        classRatios: {},
        maxTotal: '0',
        filters: [],
        seed: '0',
        newVersion: false,
        allowShortfall: false,
      } satisfies CreateSplitsRequest__Output,
      cancelled: false,
      getPeer: () => 'test',
    });
    const result = new Promise<{ code?: number }>((resolve) =>
      handler(
        call as unknown as grpc.ServerUnaryCall<CreateSplitsRequest__Output, CreateSplitsResponse>,
        (err) => resolve({ code: (err as { code?: number } | null)?.code ?? grpc.status.OK }),
      ),
    );
    call.cancelled = true;
    call.emit('cancelled', 'cancelled');
    expect(await result).toEqual({ code: grpc.status.CANCELLED });
    expect(metadataReads).toBe(0);
    expect(await codeOf(client.getSplit({ dataset: ks, name: 'cancelled' }))).toBe('NOT_FOUND');
  });
});

describe('splits (CLI)', () => {
  it('create prints the parts and sizes; list and show describe the set', async () => {
    const created = await runCli(
      [
        'splits',
        'create',
        ks,
        'cli',
        '--parts',
        'train=7,val=2,test=1',
        '--class-ratios',
        'normal=1,tumor=1',
        '--max-total',
        '200',
        '--filter',
        'x=..45000',
        '--seed',
        '9',
      ],
      cliEnv(),
    );
    expect(created.stderr).not.toMatch(/error/);
    expect(created.code).toBe(0);
    const info = await readSplitSetInfo(db, ks, 'cli');
    expect(info.parts.map((p) => p.size).reduce((a, b) => a + b, 0)).toBe(200);
    expect(created.stdout).toMatch(
      /^split set cli version 1 of dataset \w+: 200 samples in 3 parts/,
    );
    for (const p of info.parts) {
      expect(created.stdout).toMatch(new RegExp(`\\n  ${p.name} +${p.size} `));
    }
    expect(created.stdout).toContain('label 1 (tumor)');
    expect(created.stdout).toContain(
      `${info.parts[0]!.classCounts['1']}/${info.parts[0]!.targets['1']}`,
    );
    expect(created.stdout).toContain(info.contentHash);
    expect(created.stdout).toContain('cli/train, cli/val, cli/test');
    expect(created.stdout).toMatch(/worst \d+\.\d\d% from targets/);

    const list = await runCli(['splits', 'list', ks], cliEnv());
    expect(list.code).toBe(0);
    const sizes = info.parts.map((p) => `${p.name}=${p.size}`).join(' ');
    expect(list.stdout).toMatch(new RegExp(`\\n  cli +1 +3 parts +${sizes} +200 `));
    expect(list.stdout).toMatch(/\n {2}main +2 /);
    expect(list.stdout).toMatch(/\n {2}cv +1 +3 folds +fold-0=\d+ fold-1=\d+ fold-2=\d+/);

    const show = await runCli(['splits', 'show', ks, 'cli@1'], cliEnv());
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/^split set cli version 1 of dataset \w+ \(latest\)/);
    expect(show.stdout).toContain('parts            train=7,val=2,test=1');
    expect(show.stdout).toContain('class targets    ratios normal=1,tumor=1');
    expect(show.stdout).toContain('max total        200');
    expect(show.stdout).toContain('filters          x=..45000');
    expect(show.stdout).toContain('seed             9');
    for (const p of info.parts) {
      const c = `${p.classCounts['0'] ?? 0}/${p.targets['0']}`;
      expect(show.stdout).toMatch(new RegExp(`\\n  ${p.name} +${p.size} +${p.groups} +${c}`));
    }

    const old = await runCli(['splits', 'show', ks, 'main@1'], cliEnv());
    expect(old.stdout).toMatch(/\(latest is version 2\)/);
    expect(old.stdout).toContain('main@1/train, main@1/val');
  });

  it('a bad filter column or flag prints error: and exits 1', async () => {
    const badColumn = await runCli(
      ['splits', 'create', ks, 'nope', '--parts', 'a=1', '--filter', 'no_such=3'],
      cliEnv(),
    );
    expect(badColumn.code).toBe(1);
    expect(badColumn.stderr).toMatch(
      /^error: dataset \w+ has no metadata column no_such; its columns: /,
    );
    expect(badColumn.stderr).not.toMatch(/\n\s+at /);

    const badParts = await runCli(['splits', 'create', ks, 'nope', '--parts', 'train7'], cliEnv());
    expect(badParts.code).toBe(1);
    expect(badParts.stderr).toMatch(
      /^error: --parts train7: "train7" is not <name>=<positive weight>/,
    );

    // What the core's one validator refuses, each problem worded after its flag.
    const mistakes = await runCli(
      [
        'splits',
        'create',
        ks,
        'nope',
        '--parts',
        'train=7,train=0',
        '--filter',
        'x=5..1',
        '--group-by',
        'patient_id,patient_id',
      ],
      cliEnv(),
    );
    expect(mistakes.code).toBe(1);
    const lines = mistakes.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^error: /);
    expect(lines.map((l) => l.replace(/^error: /, '')).sort()).toEqual(
      [
        '--parts train=7,train=0: part train needs a positive weight, got 0',
        '--parts train=7,train=0: part train is named twice',
        '--filter x=5..1: range min 5 is above max 1, so no sample would pass',
        '--group-by patient_id,patient_id: group-by column patient_id is named twice',
      ].sort(),
    );
    const oneFold = await runCli(['splits', 'create', ks, 'nope', '--folds', '1'], cliEnv());
    expect(oneFold.code).toBe(1);
    expect(oneFold.stderr).toMatch(/^error: --folds 1: k-fold needs at least 2 folds/);
    for (const r of [mistakes, oneFold]) expect(r.stderr).not.toMatch(/\n\s+at /);

    const exists = await runCli(['splits', 'create', ks, 'cli', '--parts', 'a=1'], cliEnv());
    expect(exists.code).toBe(1);
    expect(exists.stderr).toMatch(/^error: split set cli already exists \(version 1\)/);

    const missing = await runCli(['splits', 'show', ks, 'nope'], cliEnv());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: split set nope .*does not exist/);
  });
});
