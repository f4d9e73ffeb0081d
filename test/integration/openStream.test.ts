import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ByteBudget,
  type LoaderMetrics,
  type OpenedStream,
  type StreamDeps,
  type StreamRequest,
  TransformPool,
  createDbClient,
  createLoaderMetrics,
  createStreamDeps,
  openStream,
  streamLimitsSchema,
} from '../../src/core/index.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

// The core's stream entry as the benchmarks use it: no gRPC, the real node.
const N = 40;
let client: cassandra.Client;
let a: string;
let b: string;
let metrics: LoaderMetrics;
let deps: StreamDeps;

const request: StreamRequest = {
  dataset: '',
  split: 'all',
  batchSize: 8,
  seed: 11n,
  firstEpoch: 0,
  epochs: 1,
  rank: 0,
  worldSize: 1,
  shardRule: 'uneven',
  shuffle: 'uniform',
  dropLast: false,
  ordering: 'out-of-order',
  prefetch: 2,
  adaptivePrefetch: false,
  missing: 'fail',
  resumeToken: Buffer.alloc(0),
};

beforeAll(async () => {
  client = await createDbClient(testDbConfig());
  [a, b] = [uniqueKeyspace(), uniqueKeyspace()];
  await ingestSmallDataset(client, a, N);
  await ingestSmallDataset(client, b, N);
  metrics = createLoaderMetrics();
  deps = createStreamDeps({
    paths: [{ name: 'primary', client }],
    limits: streamLimitsSchema.parse({}),
    idCacheBytes: 1 << 24,
    resumeKey: Buffer.alloc(32, 7),
    metrics,
    heldBytes: new ByteBudget(1 << 26, metrics.heldBytes),
    transforms: new TransformPool({ slots: 1, perStream: 1, maxPixels: 1 << 20, metrics }),
  });
});

afterAll(async () => {
  await Promise.allSettled([a, b].map((k) => dropKeyspace(client, k)));
  await client?.shutdown();
});

/** Takes every batch of `stream`, or the first `limit`; the ids taken, as hex. */
async function take(stream: OpenedStream, limit = Infinity): Promise<string[]> {
  const ids: string[] = [];
  let n = 0;
  for await (const { batch } of stream.batches) {
    ids.push(...batch.samples.map((s) => s.id.toString('hex')));
    if (++n >= limit) break;
  }
  return ids;
}

const sentOf = async (dataset: string): Promise<number> =>
  (await metrics.sourceSamplesSent.get()).values.find((v) => v.labels.dataset === dataset)?.value ??
  0;

describe('openStream', () => {
  it('delivers the split once, counts what was taken, and resumes after a batch from its token', async () => {
    const whole = await openStream({ ...request, dataset: a }, deps, new AbortController().signal);
    const all = await take(whole);
    expect(new Set(all).size).toBe(N);
    expect(whole.figures()).toMatchObject({
      batches: N / 8,
      samples: N,
      groupReads: whole.plan.fetch.groupReads,
    });
    expect(whole.figures().sources).toBeUndefined();
    expect(await sentOf(a)).toBe(N);

    // Two batches taken, the second's token kept: a batch left in the loop is not delivered.
    const first = await openStream({ ...request, dataset: a }, deps, new AbortController().signal);
    const taken: string[] = [];
    let token: Buffer = Buffer.alloc(0);
    let n = 0;
    for await (const { batch, resumeToken } of first.batches) {
      taken.push(...batch.samples.map((s) => s.id.toString('hex')));
      token = resumeToken;
      if (++n === 2) break;
    }
    expect(first.figures()).toMatchObject({ batches: 1, samples: 8 });
    const rest = await take(
      await openStream(
        { ...request, dataset: a, resumeToken: token },
        deps,
        new AbortController().signal,
      ),
    );
    expect(new Set([...taken, ...rest]).size).toBe(N);
    expect(taken.length + rest.length).toBe(N);
  });

  it("counts a mixture's samples source by source, in its figures and metric", async () => {
    const before = [await sentOf(a), await sentOf(b)];
    const mixed = await openStream(
      {
        ...request,
        mix: {
          sources: [
            { dataset: a, split: 'all', weight: 1, repeat: false },
            { dataset: b, split: 'all', weight: 3, repeat: true },
          ],
          samplesPerEpoch: 32,
        },
      },
      deps,
      new AbortController().signal,
    );
    expect(mixed.plan.mixed).toBe(true);
    const ids = await take(mixed);
    const sources = mixed.figures().sources!;
    expect(sources.map((s) => s.dataset)).toEqual([a, b]);
    expect(sources[0]!.samples + sources[1]!.samples).toBe(ids.length);
    expect(sources.map((s) => s.samples)).toEqual(mixed.plan.sources.map((s) => s.quota));
    expect([(await sentOf(a)) - before[0]!, (await sentOf(b)) - before[1]!]).toEqual(
      sources.map((s) => s.samples),
    );
  });

  it("stops with the signal's reason", async () => {
    const abort = new AbortController();
    const stream = await openStream({ ...request, dataset: a, epochs: 3 }, deps, abort.signal);
    const reason = new Error('caller left');
    const taking = (async () => {
      for await (const ready of stream.batches) {
        expect(ready.resumeToken.length).toBeGreaterThan(0);
        abort.abort(reason);
      }
    })();
    await expect(taking).rejects.toBe(reason);
    expect(stream.figures().samples).toBeLessThan(3 * N);
  });
});
