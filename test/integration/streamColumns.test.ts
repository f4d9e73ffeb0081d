import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import cassandra from 'cassandra-driver';
import { pack } from 'tar-stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientError,
  type DecodedBatch,
  type IngestSampleInput,
  LoaderClient,
  type StreamBatchesOptions,
} from '../../src/client/index.js';
import { createDbClient, datasetNamespace, sampleId } from '../../src/core/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import { dbEnv } from '../support/dbEnv.js';
import { runCli } from '../support/runCli.js';

/** Metadata columns of every type a stream returns. */
const COLUMNS = { caption: 'text', n: 'int', big: 'bigint', x: 'double', ok: 'boolean' } as const;
const N = 90;

let db: cassandra.Client;
let server: LoaderServer;
let client: LoaderClient;
const datasets: string[] = [];
/** Dataset with every column type; dataset with `caption` only; dataset of JPEGs. */
let full: string;
let captionsOnly: string;
let photos: string;

/** What sample `i` of `prefix` stores: a caption, numbers and a flag, some of them null. */
function metadata(prefix: string, i: number) {
  return {
    caption: i % 9 === 4 ? null : `${prefix} caption ${i} ${'é'.repeat(i % 5)}`,
    n: i % 5 === 0 ? null : i * 1000 - 40_000,
    big: i % 6 === 1 ? null : BigInt(i) * 10_000_000_000n - 7n,
    x: i % 7 === 2 ? null : i / 8 - 3.25,
    ok: i % 4 === 0 ? null : i % 3 === 0,
  };
}

function records(prefix: string, n: number): IngestSampleInput[] {
  return Array.from({ length: n }, (_, i) => ({
    sourceKey: `${prefix}/${i}`,
    data: Buffer.from(`${prefix} bytes of ${i}`),
    label: i % 3,
    metadata: Object.fromEntries(
      Object.entries(metadata(prefix, i)).filter(([, v]) => v !== null),
    ) as IngestSampleInput['metadata'],
  }));
}

/** Expected values by sample id, for each dataset. */
const expected = new Map<string, { key: string; values: ReturnType<typeof metadata> }>();

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  server = await startTestServer({ shutdownGraceMs: 0 });
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
  full = uniqueKeyspace();
  captionsOnly = uniqueKeyspace();
  photos = uniqueKeyspace();
  datasets.push(full, captionsOnly, photos);
  await client.ingest(full, records('full', N), { labelNames: ['a', 'b', 'c'], columns: COLUMNS });
  await client.ingest(
    captionsOnly,
    records('cap', 40).map((r) => ({
      ...r,
      metadata: { caption: r.metadata!['caption'] ?? null },
    })),
    { labelNames: ['a', 'b', 'c'], columns: { caption: 'text' } },
  );
  const jpegs = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      sharp({
        create: { width: 40 + i, height: 30, channels: 3, background: { r: i * 10, g: 90, b: 10 } },
      })
        .jpeg()
        .toBuffer(),
    ),
  );
  await client.ingest(
    photos,
    jpegs.map((data, i) => ({
      sourceKey: `photo/${i}`,
      data,
      label: i % 2,
      metadata: { caption: `photo ${i}` },
    })),
    { labelNames: ['a', 'b'], columns: { caption: 'text' } },
  );
  for (const [ds, prefix, n] of [
    [full, 'full', N],
    [captionsOnly, 'cap', 40],
  ] as const) {
    const ns = datasetNamespace(ds);
    for (let i = 0; i < n; i++) {
      const key = `${prefix}/${i}`;
      const values = metadata(prefix, i);
      expected.set(
        sampleId(key, ns),
        ds === full ? { key, values } : { key, values: { caption: values.caption } as never },
      );
    }
  }
}, 120_000);

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  for (const ks of datasets) await dropKeyspace(db, ks);
  await db?.shutdown();
});

async function collect(options: StreamBatchesOptions, limit = Infinity): Promise<DecodedBatch[]> {
  const out: DecodedBatch[] = [];
  for await (const b of client.streamBatches(options)) {
    out.push(b);
    if (out.length >= limit) break;
  }
  return out;
}

/** Checks every sample of `batches` carries its own values of `names`; returns the ids seen. */
function checkColumns(batches: DecodedBatch[], names: string[]): string[] {
  const ids: string[] = [];
  for (const b of batches) {
    expect(Object.keys(b.columns)).toEqual(names);
    b.ids.forEach((id, i) => {
      const want = expected.get(id);
      expect(want, `sample ${id}`).toBeDefined();
      for (const name of names) {
        const got = b.columns[name]!.valueAt(i);
        const value =
          name === 'source_key'
            ? want!.key
            : ((want!.values as Record<string, unknown>)[name] ?? null);
        expect(got, `${name} of ${want!.key}`).toEqual(value);
      }
      ids.push(id);
    });
  }
  return ids;
}

const ALL = ['source_key', 'caption', 'n', 'big', 'x', 'ok'];

describe('metadata columns in the stream', () => {
  it.each(['out-of-order', 'in-order'] as const)(
    'gives each sample exactly its own values of every type, nulls included (%s)',
    async (ordering) => {
      const batches = await collect({
        dataset: full,
        split: 'all',
        batchSize: 16,
        seed: 3,
        ordering,
        columns: ALL,
      });
      const ids = checkColumns(batches, ALL);
      expect(new Set(ids).size).toBe(N);
      expect(ids.length).toBe(N);
      // Types as stored: bigint as bigint, a typed array for numbers.
      expect(batches[0]!.columns['big']!.values).toBeInstanceOf(BigInt64Array);
      expect(batches[0]!.columns['n']!.type).toBe('int');
    },
  );

  it('resumes by token with other columns, still exactly once', async () => {
    const options = { dataset: full, split: 'all', batchSize: 8, seed: 11 } as const;
    const head = await collect({ ...options, columns: ['caption', 'n'] }, 4);
    const rest = await collect({
      ...options,
      columns: ['big', 'source_key'],
      resumeToken: head.at(-1)!.resumeToken,
    });
    const ids = [
      ...checkColumns(head, ['caption', 'n']),
      ...checkColumns(rest, ['big', 'source_key']),
    ];
    expect(ids.length).toBe(N);
    expect(new Set(ids).size).toBe(N);
    // The same stream without columns resumes from the token too: columns are not in the job.
    const bare = await collect({ ...options, resumeToken: head.at(-1)!.resumeToken });
    expect(bare.flatMap((b) => b.ids).sort()).toEqual(rest.flatMap((b) => b.ids).sort());
    expect(bare[0]!.columns).toEqual({});
  });

  it('gives nulls for a mixture source whose dataset lacks the column', async () => {
    const batches = await collect({
      sources: [
        { dataset: full, split: 'all', weight: 1 },
        { dataset: captionsOnly, split: 'all', weight: 1 },
      ],
      samplesPerEpoch: 80,
      batchSize: 10,
      seed: 5,
      columns: ['caption', 'n', 'source_key'],
    });
    let fromCaptionsOnly = 0;
    for (const b of batches) {
      b.ids.forEach((id, i) => {
        const want = expected.get(id)!;
        expect(b.columns['source_key']!.valueAt(i)).toBe(want.key);
        expect(b.columns['caption']!.valueAt(i)).toBe(want.values.caption);
        if (b.sourceIndexes![i] === 1) {
          fromCaptionsOnly++;
          expect(b.columns['n']!.valueAt(i)).toBeNull();
        } else {
          expect(b.columns['n']!.valueAt(i)).toBe(want.values.n);
        }
      });
    }
    expect(fromCaptionsOnly).toBe(40);
  });

  it('carries columns beside a transform, for the samples the batch holds', async () => {
    const batches = await collect({
      dataset: photos,
      split: 'all',
      batchSize: 5,
      seed: 1,
      transform: { channels: 3, centerCrop: { height: 24, width: 24 } },
      columns: ['source_key', 'caption'],
    });
    const ns = datasetNamespace(photos);
    let seen = 0;
    for (const b of batches) {
      expect(b.tensor?.shape).toEqual([b.ids.length, 24, 24, 3]);
      b.ids.forEach((id, i) => {
        const key = b.columns['source_key']!.valueAt(i) as string;
        expect(sampleId(key, ns)).toBe(id);
        expect(b.columns['caption']!.valueAt(i)).toBe(`photo ${key.split('/')[1]}`);
        // The red of the crop is what the source key's image was made with.
        const red = b.tensor!.data[i * 24 * 24 * 3]!;
        expect(Math.abs(red - Number(key.split('/')[1]) * 10)).toBeLessThan(12);
        seen++;
      });
    }
    expect(seen).toBe(24);
  });

  it('refuses unknown and mixed-up columns with INVALID_ARGUMENT naming them', async () => {
    const refused = async (options: StreamBatchesOptions): Promise<ClientError> => {
      const err = await collect(options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ClientError);
      return err as ClientError;
    };
    const unknown = await refused({ dataset: full, split: 'all', batchSize: 4, columns: ['nope'] });
    expect(unknown.code).toBe(3);
    expect(unknown.message).toMatch(/column "nope" is not in dataset .*caption/);
    const none = await refused({
      sources: [
        { dataset: full, split: 'all' },
        { dataset: captionsOnly, split: 'all' },
      ],
      batchSize: 4,
      columns: ['caption', 'missing_everywhere'],
    });
    expect(none.message).toMatch(/"missing_everywhere" is not in any source's dataset/);
    // The SDK refuses a name that cannot be a column before sending, in the server's words.
    expect(() =>
      client.streamBatches({ dataset: full, split: 'all', batchSize: 4, columns: ['Caption'] }),
    ).toThrow(/"Caption" is not a metadata column name/);
    expect(() =>
      client.streamBatches({ dataset: full, split: 'all', batchSize: 4, columns: ['label'] }),
    ).toThrow(/Batch.labels/);
  });
});

describe('image-text pairs from a WebDataset without labels', () => {
  const PAIRS = 30;
  let pairs: string;
  let work: string;
  const caption = (i: number): string => `a small orange square, number ${i}`;
  const json = (i: number) => (i % 10 === 3 ? { width: 50 + i } : { width: 50 + i, score: i / 4 });

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'sl-records-'));
    const p = pack();
    for (let i = 0; i < PAIRS; i++) {
      const key = `k${String(i).padStart(3, '0')}`;
      const jpeg = await sharp({
        create: { width: 32, height: 32, channels: 3, background: { r: 200, g: i * 8, b: 0 } },
      })
        .jpeg()
        .toBuffer();
      p.entry({ name: `${key}.jpg` }, jpeg);
      p.entry({ name: `${key}.txt` }, caption(i));
      p.entry({ name: `${key}.json` }, JSON.stringify(json(i)));
    }
    p.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of p as AsyncIterable<Buffer>) chunks.push(chunk);
    const tar = path.join(work, 'pairs.tar');
    await writeFile(tar, Buffer.concat(chunks));
    pairs = uniqueKeyspace();
    datasets.push(pairs);
    const run = await runCli(['ingest', pairs, '--webdataset', tar], dbEnv(testDbConfig()));
    expect(run.code, run.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** Checks each image comes with its own caption and JSON values, by its key. */
  function checkPairs(batches: DecodedBatch[]): string[] {
    const ns = datasetNamespace(pairs);
    const keys: string[] = [];
    for (const b of batches) {
      b.ids.forEach((id, i) => {
        const key = b.columns['source_key']!.valueAt(i) as string;
        const n = Number(/k(\d+)$/.exec(key)![1]);
        expect(sampleId(key, ns)).toBe(id);
        expect(b.labels[i]).toBe(-1);
        expect(b.columns['txt']!.valueAt(i)).toBe(caption(n));
        expect(b.columns['width']!.valueAt(i)).toBe(50 + n);
        expect(b.columns['score']!.valueAt(i)).toBe(json(n).score ?? null);
        keys.push(key);
      });
    }
    return keys;
  }

  it.each(['out-of-order', 'in-order'] as const)(
    'streams every image with its own caption and values (%s), and through a resume',
    async (ordering) => {
      const options = {
        dataset: pairs,
        split: 'all',
        batchSize: 4,
        seed: 8,
        ordering,
        columns: ['source_key', 'txt', 'width', 'score'],
      };
      const all = checkPairs(await collect(options));
      expect(new Set(all).size).toBe(PAIRS);
      const head = await collect(options, 3);
      const rest = await collect({ ...options, resumeToken: head.at(-1)!.resumeToken });
      const resumed = [...checkPairs(head), ...checkPairs(rest)];
      expect(resumed.length).toBe(PAIRS);
      expect(new Set(resumed)).toEqual(new Set(all));
    },
  );
});
