import { randomBytes } from 'node:crypto';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/index.js';
import { LoaderClient } from '../../src/client/index.js';
import { mergeResumeTokens } from '../../src/client/index.js';
import type { StreamBatchesOptions } from '../../src/client/index.js';
import { createDbClient, datasetNamespace, sampleId } from '../../src/core/index.js';
import { encodeJobCheckpoint } from '../../src/proto/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

const N = 1000;
let db: cassandra.Client;
let ks: string;
let server: LoaderServer;
let client: LoaderClient;
let allIds: string[];

/** What one rank's stream delivered before it stopped, and where it stopped. */
interface RankRun {
  /** Ids delivered, per epoch. */
  ids: Map<number, string[]>;
  batches: Map<number, number>;
  token?: Buffer;
}

/** Streams one rank, stopping after `stopAfter` batches (all when absent). */
async function runRank(req: StreamBatchesOptions, stopAfter = Infinity): Promise<RankRun> {
  const run: RankRun = { ids: new Map(), batches: new Map() };
  let taken = 0;
  if (stopAfter === 0) return run;
  for await (const b of client.streamBatches(req)) {
    run.ids.set(b.epoch, [...(run.ids.get(b.epoch) ?? []), ...b.ids]);
    run.batches.set(b.epoch, (run.batches.get(b.epoch) ?? 0) + 1);
    run.token = b.resumeToken;
    if (++taken >= stopAfter) break;
  }
  return run;
}

/** Runs every rank of a world concurrently; rank r stops after `stops[r]` batches. */
async function runWorld(
  req: StreamBatchesOptions,
  worldSize: number,
  stops: number[] = [],
): Promise<RankRun[]> {
  return Promise.all(
    [...Array(worldSize).keys()].map((rank) => runRank({ ...req, rank, worldSize }, stops[rank])),
  );
}

const idsIn = (runs: RankRun[], epoch: number): string[] =>
  runs.flatMap((r) => r.ids.get(epoch) ?? []);

const checkpointOf = (runs: RankRun[], base?: Buffer, epoch = 0): Buffer =>
  mergeResumeTokens({
    worldSize: runs.length,
    ranks: runs.map((r, rank) => ({ rank, epoch, ...(r.token ? { resumeToken: r.token } : {}) })),
    ...(base ? { base } : {}),
  });

async function failure(req: StreamBatchesOptions): Promise<ClientError> {
  try {
    await runRank(req);
  } catch (err) {
    expect(err).toBeInstanceOf(ClientError);
    return err as ClientError;
  }
  throw new Error('the stream succeeded');
}

const sorted = (ids: string[]): string[] => [...ids].sort();

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  const expected = await ingestSmallDataset(db, ks, N);
  const ns = datasetNamespace(ks);
  allIds = sorted([...expected.keys()].map((k) => sampleId(k, ns)));
  server = await startTestServer({ resumeKey: randomBytes(32).toString('hex') });
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
});

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  await dropKeyspace(db, ks);
  await db.shutdown();
});

describe('elastic exactly-once through a job checkpoint', () => {
  const job = { split: 'all', batchSize: 16, seed: 5, epochs: 2 } as const;

  it('world 4 stopped mid-epoch, resumed at 3 and at 6: each epoch is the split exactly once', async () => {
    const req = { ...job, dataset: ks };
    const old = await runWorld(req, 4, [3, 7, 5, 9]);
    const before = idsIn(old, 0);
    expect(before.length).toBe(16 * (3 + 7 + 5 + 9));
    const checkpoint = checkpointOf(old);
    // Bounded by the tokens, not the split (1,000 samples would be 125 bytes of bitmap alone
    // per rank; a token here is a header, an HMAC and a bitmap of the window's spread).
    expect(checkpoint.length).toBeLessThan(4 * 160);
    for (const w of [3, 6]) {
      const resumed = await runWorld({ ...req, jobCheckpoint: checkpoint }, w);
      expect(sorted([...before, ...idsIn(resumed, 0)])).toEqual(allIds);
      expect(sorted(idsIn(resumed, 1))).toEqual(allIds);
    }
  });

  it('two changes of size within one epoch (4 to 3 to 5), with a reconnect in between', async () => {
    const req = { ...job, dataset: ks, epochs: 1 };
    const w4 = await runWorld(req, 4, [4, 2, 6, 3]);
    const cp1 = checkpointOf(w4);
    const w3 = await runWorld({ ...req, jobCheckpoint: cp1 }, 3, [5, 1, 3]);
    // Rank 1 reconnects once (its token and the checkpoint it started from), then stops again.
    const again = await runRank(
      { ...req, rank: 1, worldSize: 3, jobCheckpoint: cp1, resumeToken: w3[1]!.token! },
      4,
    );
    const w3ids = [...idsIn(w3, 0), ...idsIn([again], 0)];
    w3[1] = { ...again, token: again.token! };
    const cp2 = checkpointOf(w3, cp1);
    expect(cp2.length).toBeGreaterThan(cp1.length); // it holds cp1 as its base
    const w5 = await runWorld({ ...req, jobCheckpoint: cp2 }, 5);
    const union = [...idsIn(w4, 0), ...w3ids, ...idsIn(w5, 0)];
    expect(union).toHaveLength(N);
    expect(sorted(union)).toEqual(allIds);
  });

  it('a token of a re-sharded epoch needs its checkpoint, and a checkpoint after the epoch drops it', async () => {
    const req = { ...job, dataset: ks, epochs: 2 };
    const cp1 = checkpointOf(await runWorld(req, 4, [2, 2, 2, 2]));
    const w2 = await runWorld({ ...req, jobCheckpoint: cp1 }, 2, [1, 1]);
    const alone = await failure({ ...req, rank: 0, worldSize: 2, resumeToken: w2[0]!.token! });
    expect(alone.codeName).toBe('INVALID_ARGUMENT');
    expect(alone.message).toMatch(/ordinary epoch|re-sharded from a job checkpoint/);
    // Both ranks finish epoch 0 and take one batch of epoch 1: the re-shard is over.
    const more = await Promise.all(
      [0, 1].map(async (rank) => {
        const run: RankRun = { ids: new Map(), batches: new Map() };
        for await (const b of client.streamBatches({
          ...req,
          rank,
          worldSize: 2,
          jobCheckpoint: cp1,
          resumeToken: w2[rank]!.token!,
        })) {
          run.token = b.resumeToken;
          if (b.epoch === 1) break;
        }
        return run;
      }),
    );
    const cp2 = checkpointOf(more, cp1);
    expect(cp2.length).toBeLessThan(cp1.length + 2 * 100); // no base inside
    const rest = await runWorld({ ...req, jobCheckpoint: cp2 }, 3);
    expect(idsIn(rest, 0)).toEqual([]);
    expect(idsIn(rest, 1).length).toBe(N - 2 * 16);
  });

  it('pad after a re-shard gives every new rank the same number of batches', async () => {
    const req = { ...job, dataset: ks, epochs: 1, shardRule: 'pad' as const };
    const old = await runWorld(req, 4, [2, 5, 3, 4]);
    const resumed = await runWorld({ ...req, jobCheckpoint: checkpointOf(old) }, 3);
    const counts = resumed.map((r) => r.batches.get(0) ?? 0);
    expect(new Set(counts).size).toBe(1);
    const union = [...idsIn(old, 0), ...idsIn(resumed, 0)];
    expect(new Set(union).size).toBe(N);
    // Padding repeats at most one sample per rank and world.
    expect(union.length - N).toBeLessThan(4 + 3);
  });

  it('refuses a checkpoint missing a rank, with a rank twice, of another seed or split, or altered', async () => {
    const req = { ...job, dataset: ks, epochs: 1 };
    const old = await runWorld(req, 3, [1, 2, 1]);
    const entries = old.map((r, rank) => ({ rank, epoch: 0, resumeToken: r.token! }));
    const expectRefused = async (
      change: Partial<StreamBatchesOptions>,
      message: RegExp,
    ): Promise<void> => {
      const err = await failure({ ...req, rank: 0, worldSize: 2, ...change });
      expect(err.codeName).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(message);
    };
    const raw = (ranks: typeof entries): Buffer => encodeJobCheckpoint({ worldSize: 3, ranks });
    await expectRefused(
      { jobCheckpoint: raw(entries.slice(0, 2)) },
      /lacks rank 2 of its world size 3/,
    );
    await expectRefused(
      { jobCheckpoint: raw([entries[0]!, entries[1]!, entries[1]!]) },
      /lists rank 1 twice/,
    );
    const good = checkpointOf(old);
    await expectRefused({ jobCheckpoint: good, seed: 6 }, /belongs to another request/);
    await expectRefused(
      { jobCheckpoint: good, split: 'all', batchSize: 8 },
      /belongs to another request/,
    );
    const altered = entries.map((e) => ({ ...e }));
    altered[2]!.resumeToken = Buffer.from(altered[2]!.resumeToken);
    altered[2]!.resumeToken[altered[2]!.resumeToken.length - 33]! ^= 1;
    await expectRefused({ jobCheckpoint: raw(altered) }, /not authentic/);
    await expectRefused(
      { jobCheckpoint: Buffer.from('not a checkpoint') },
      /not a serialized JobCheckpoint/,
    );
    expect(() => mergeResumeTokens({ worldSize: 3, ranks: entries.slice(1) })).toThrow(/missing/);
  });
});
