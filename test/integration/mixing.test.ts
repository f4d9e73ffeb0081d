import { randomBytes } from 'node:crypto';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/index.js';
import type { DecodedBatch } from '../../src/client/index.js';
import { LoaderClient } from '../../src/client/index.js';
import { mergeResumeTokens } from '../../src/client/index.js';
import type { StreamBatchesOptions } from '../../src/client/index.js';
import { uuidFromBytes } from '../../src/testing/index.js';
import {
  createDbClient,
  createPermutationCache,
  createSplitIdsCache,
  datasetNamespace,
  planMixture,
  resolveSplit,
  sampleId,
} from '../../src/core/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { startServeCli } from '../support/serveCli.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * Weighted mixing against the real node: three datasets (int labels, label blobs, int
 * labels) mixed 5:3:2 in epochs of 1,000 positions; the blob dataset (130 samples) repeats,
 * the others are sub-sampled. Every check compares what the loader delivered with the mixed
 * sequence worked out here from the splits read from the database.
 */
let db: cassandra.Client;
let server: LoaderServer;
let client: LoaderClient;
const ks = { a: '', b: '', c: '' };
/** What each sample holds, by id: its dataset, int label, label blob and bytes. */
const stored = new Map<string, { dataset: string; label: number; blob?: string; data: Buffer }>();
let mix: StreamBatchesOptions['sources'];
const job = { batchSize: 20, seed: 9, epochs: 2, samplesPerEpoch: 1_000 } as const;
/** The mixed sequence of each epoch as (source index, id), from planMixture and the splits. */
const sequence = new Map<number, { source: number; id: string }[]>();

const key = (source: number, id: string): string => `${source}/${id}`;
const multiset = (entries: string[]): string[] => [...entries].sort();
const keysOf = (batches: DecodedBatch[], epoch?: number): string[] =>
  batches
    .filter((b) => epoch === undefined || b.epoch === epoch)
    .flatMap((b) => b.ids.map((id, i) => key(b.sourceIndexes![i]!, id)));
const expectedKeys = (epoch: number): string[] =>
  multiset(sequence.get(epoch)!.map((e) => key(e.source, e.id)));

async function collect(
  c: LoaderClient,
  req: StreamBatchesOptions,
  stopAfter = Infinity,
): Promise<DecodedBatch[]> {
  const out: DecodedBatch[] = [];
  if (stopAfter === 0) return out;
  for await (const b of c.streamBatches(req)) {
    out.push(b);
    if (out.length >= stopAfter) break;
  }
  return out;
}

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks.a = uniqueKeyspace();
  ks.b = uniqueKeyspace();
  ks.c = uniqueKeyspace();
  server = await startTestServer({ resumeKey: randomBytes(32).toString('hex') });
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
  for (const [dataset, n] of [
    [ks.a, 600],
    [ks.c, 900],
  ] as const) {
    const written = await ingestSmallDataset(db, dataset, n);
    for (const [k, v] of written) {
      stored.set(sampleId(k, datasetNamespace(dataset)), { dataset, ...v });
    }
  }
  // A dataset labelled by blobs only (e.g. masks), written through the loader.
  const blobs = Array.from({ length: 130 }, (_, i) => ({
    sourceKey: `mask-${i}`,
    data: Buffer.from(`masked-${i}`),
    labelBlob: Buffer.from(`blob-${i}`),
  }));
  await client.ingest(ks.b, blobs);
  for (const s of blobs) {
    stored.set(sampleId(s.sourceKey, datasetNamespace(ks.b)), {
      dataset: ks.b,
      label: -1,
      blob: s.labelBlob.toString(),
      data: s.data,
    });
  }
  mix = [
    { dataset: ks.a, split: 'all', weight: 5 },
    { dataset: ks.b, split: 'all', weight: 3, repeat: true },
    { dataset: ks.c, split: 'all', weight: 2 },
  ];
  const cache = createSplitIdsCache(1 << 24);
  const splits = await Promise.all(mix.map((s) => resolveSplit(db, cache, s.dataset, s.split)));
  const plan = planMixture(
    {
      sources: mix.map((s) => ({ ...s, weight: s.weight!, repeat: s.repeat ?? false })),
      samplesPerEpoch: job.samplesPerEpoch,
    },
    splits,
    BigInt(job.seed),
    'uniform',
    createPermutationCache(1 << 24),
    { maxMixedEpoch: 1_000_000 },
  );
  const starts = [0, splits[0]!.count, splits[0]!.count + splits[1]!.count];
  for (const epoch of [0, 1]) {
    sequence.set(
      epoch,
      Array.from(plan.sequence(epoch), (g) => {
        const source = g >= starts[2]! ? 2 : g >= starts[1]! ? 1 : 0;
        return { source, id: uuidFromBytes(splits[source]!.ids, (g - starts[source]!) * 16) };
      }),
    );
  }
}, 240_000);

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  for (const k of Object.values(ks)) if (k) await dropKeyspace(db, k);
  await db?.shutdown();
});

describe('a weighted mixture of three datasets in one stream', () => {
  it('follows the mixed sequence exactly, in order, with each sample of its source', async () => {
    const req = { ...job, sources: mix, ordering: 'in-order' } as const;
    const first = await collect(client, req);
    for (const epoch of [0, 1]) {
      const got = first
        .filter((b) => b.epoch === epoch)
        .flatMap((b) => b.ids.map((id, i) => ({ source: b.sourceIndexes![i]!, id })));
      expect(got).toEqual(sequence.get(epoch));
      // Quotas 500, 300, 200: the repeated source's 130 samples came once per full pass.
      const counts = [0, 1, 2].map((s) => got.filter((g) => g.source === s).length);
      expect(counts).toEqual([500, 300, 200]);
      const b = got.filter((g) => g.source === 1).map((g) => g.id);
      expect(new Set(b.slice(0, 130)).size).toBe(130);
      expect(new Set(b.slice(130, 260)).size).toBe(130);
      expect(new Set(b.slice(260)).size).toBe(40);
      // Sub-sampled sources never repeat within the epoch.
      for (const s of [0, 2]) {
        const ids = got.filter((g) => g.source === s).map((g) => g.id);
        expect(new Set(ids).size).toBe(ids.length);
      }
    }
    // The same request again: the same sequence, batch for batch.
    const again = await collect(client, req);
    expect(again.map((b) => b.ids)).toEqual(first.map((b) => b.ids));
    expect(again.map((b) => Array.from(b.sourceIndexes!))).toEqual(
      first.map((b) => Array.from(b.sourceIndexes!)),
    );
  });

  it('delivers an int-labelled and a blob-labelled dataset each with its own labels', async () => {
    const batches = await collect(client, { ...job, epochs: 1, sources: mix });
    let blobs = 0;
    for (const b of batches) {
      b.ids.forEach((id, i) => {
        const want = stored.get(id)!;
        expect(want.dataset).toBe(mix![b.sourceIndexes![i]!]!.dataset);
        expect(Buffer.compare(b.samples[i]!, want.data)).toBe(0);
        expect(b.labels[i]).toBe(want.label);
        if (want.blob !== undefined) {
          blobs++;
          expect(b.labelBlobs![i]!.toString()).toBe(want.blob);
        } else {
          expect(b.labelBlobs?.[i]?.length ?? 0).toBe(0);
        }
      });
    }
    expect(blobs).toBe(300);
    // Per-source counters: the metric by dataset.
    const metric = await server.context.metrics.sourceSamplesSent.get();
    const sent = (dataset: string): number =>
      metric.values.filter((v) => v.labels.dataset === dataset).reduce((a, v) => a + v.value, 0);
    expect(sent(ks.b)).toBeGreaterThanOrEqual(300);
  });

  it('continues a world of 4 at a world of 3 from a job checkpoint, exactly once', async () => {
    const req = { ...job, sources: mix };
    const stops = [3, 9, 0, 5];
    const old = await Promise.all(
      stops.map((stop, rank) => collect(client, { ...req, rank, worldSize: 4 }, stop)),
    );
    const checkpoint = mergeResumeTokens({
      worldSize: 4,
      ranks: old.map((r, rank) => ({
        rank,
        epoch: 0,
        ...(r.length > 0 ? { resumeToken: r.at(-1)!.resumeToken } : {}),
      })),
    });
    const resumed = await Promise.all(
      [0, 1, 2].map((rank) =>
        collect(client, { ...req, rank, worldSize: 3, jobCheckpoint: checkpoint }),
      ),
    );
    const before = old.flatMap((r) => keysOf(r, 0));
    expect(before.length).toBe(20 * (3 + 9 + 0 + 5));
    expect(multiset([...before, ...resumed.flatMap((r) => keysOf(r, 0))])).toEqual(expectedKeys(0));
    expect(multiset(resumed.flatMap((r) => keysOf(r, 1)))).toEqual(expectedKeys(1));
  });

  it('resumes exactly once through a SIGKILL of the loader, on another loader', async () => {
    // Two loaders of one deployment: they share the resume key.
    const env = { SCYLLA_LOADER_RESUME_KEY: randomBytes(32).toString('hex') };
    const first = await startServeCli(1, [], env);
    const second = await startServeCli(1, [], env);
    try {
      const req = { ...job, sources: mix };
      // The smallest HTTP/2 window and one batch read ahead: the loader can be at most about
      // 20 of these 3 kB batches ahead of the consumer when it is killed, so the stream cannot
      // have been sent whole by then (with the default 64 MiB window, a fast loader could).
      const a = new LoaderClient(`127.0.0.1:${first.port}`, {
        reconnect: { attempts: 0 },
        flowControlWindow: 65_535,
        maxBufferedBatches: 1,
      });
      const got: DecodedBatch[] = [];
      let error: unknown;
      try {
        for await (const b of a.streamBatches(req)) {
          got.push(b);
          if (got.length === 30) first.child.kill('SIGKILL');
        }
      } catch (err) {
        error = err;
      } finally {
        a.close();
      }
      expect(error).toBeInstanceOf(ClientError);
      expect(got.length).toBeGreaterThanOrEqual(30);
      expect(got.length).toBeLessThan(100);
      const b = new LoaderClient(`127.0.0.1:${second.port}`, { reconnect: { attempts: 0 } });
      try {
        const rest = await collect(b, { ...req, resumeToken: got.at(-1)!.resumeToken });
        const all = [...got, ...rest];
        expect(multiset(keysOf(all, 0))).toEqual(expectedKeys(0));
        expect(multiset(keysOf(all, 1))).toEqual(expectedKeys(1));
      } finally {
        b.close();
      }
      // The end line of the second loader's stream counts each source.
      // The loader logs the end after the call ended: the client may see the end first.
      const ended = (): Record<string, unknown> | undefined =>
        second.lines.find((l) => l['event'] === 'stream_end' && l['code'] === 'OK');
      for (let i = 0; i < 100 && !ended(); i++) await new Promise((r) => setTimeout(r, 50));
      const end = ended();
      const sources = end?.['sources'] as { dataset: string; samples: number }[];
      expect(sources.map((s) => s.dataset)).toEqual([ks.a, ks.b, ks.c]);
      expect(sources.reduce((x, s) => x + s.samples, 0)).toBe(2_000 - got.length * 20);
    } finally {
      first.child.kill('SIGKILL');
      second.child.kill('SIGTERM');
      await Promise.allSettled([first.done, second.done]);
    }
  });

  it('refuses what cannot be mixed, naming the source', async () => {
    const codeOf = async (req: StreamBatchesOptions): Promise<ClientError> => {
      try {
        await collect(client, req);
      } catch (err) {
        return err as ClientError;
      }
      throw new Error('the stream succeeded');
    };
    // The blob dataset's share (300) is more than its 130 samples, without repeat.
    const noRepeat = await codeOf({
      ...job,
      sources: mix!.map((s) => ({ ...s, repeat: false })),
    });
    expect(noRepeat.code).toBe(3); // INVALID_ARGUMENT
    expect(noRepeat.details).toContain(`source 1 (dataset "${ks.b}", split "all")`);
    expect(noRepeat.details).toContain('set repeat on it');
    const missing = await codeOf({
      ...job,
      sources: [...mix!, { dataset: 'no_such_dataset', split: 'all' }],
    });
    expect(missing.code).toBe(5); // NOT_FOUND
    expect(missing.details).toContain('source 3 (dataset "no_such_dataset", split "all")');
    // Refused by the SDK before any call, with the server's words.
    expect(() => client.streamBatches({ ...job, sources: [{ ...mix![0]!, weight: -1 }] })).toThrow(
      /source 0 .*weight -1 must be a finite number above 0/,
    );
  });

  it('by default sizes the epoch until the source with the largest weight per sample is used once', async () => {
    // a (600) and c (900) at 1:1: a is used up first; c gives 600 of its 900.
    const batches = await collect(client, {
      batchSize: 50,
      seed: 1,
      sources: [
        { dataset: ks.a, split: 'all' },
        { dataset: ks.c, split: 'all' },
      ],
    });
    const got = keysOf(batches);
    expect(got.length).toBe(1_200);
    const fromA = got.filter((k) => k.startsWith('0/'));
    expect(new Set(fromA).size).toBe(600);
    expect(new Set(got.filter((k) => k.startsWith('1/'))).size).toBe(600);
  });
});
