import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientError,
  LoaderClient,
  mergeResumeTokens,
  type DecodedBatch,
  type LedgerBatchEntry,
  type StreamBatchesOptions,
} from '../../src/client/index.js';
import { createDbClient, datasetNamespace, sampleId } from '../../src/core/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { hashToken, newToken } from '../../src/testing/index.js';
import { startTestServer } from '../support/loaderServer.js';
import { startServeCli } from '../support/serveCli.js';
import { dbEnv } from '../support/dbEnv.js';
import { runCli } from '../support/runCli.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { ingestImageDataset } from '../support/imageDataset.js';

const N = 600;
let db: cassandra.Client;
let ks: string;
let other: string;
let images: string;
let ledgerKs: string;
let server: LoaderServer;
let client: LoaderClient;
let allIds: string[];
let keyOf: Map<string, string>;
const resumeKey = randomBytes(32).toString('hex');

/** What one rank received: its batches as (epoch, index, ids), in arrival order. */
interface Received {
  batches: { epoch: number; index: number; ids: string[] }[];
  token?: Buffer;
}

/** Streams `req`, keeping what arrived; stops after `stopAfter` batches (all when absent). */
async function receive(
  c: LoaderClient,
  req: StreamBatchesOptions,
  stopAfter = Infinity,
  into: Received = { batches: [] },
): Promise<Received> {
  if (stopAfter === 0) return into;
  let taken = 0;
  for await (const b of c.streamBatches(req)) {
    into.batches.push({ epoch: b.epoch, index: b.index, ids: [...b.ids] });
    into.token = Buffer.from(b.resumeToken);
    if (++taken >= stopAfter) break;
  }
  return into;
}

/** Every live batch of `job` for a rank and epoch, by index. */
async function ledgerOf(job: string, epoch: number, rank: number): Promise<LedgerBatchEntry[]> {
  const got = await client.getLedger(job, { batches: { epoch, rank, first: 0, last: 999 } });
  return got.batches;
}

const sorted = (ids: string[]): string[] => [...ids].sort();

/** A metric's value (summed over its series) from a loader's /metrics. */
async function metric(loader: LoaderServer, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${loader.metricsPort}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}
const base = (job: string): StreamBatchesOptions => ({
  dataset: ks,
  split: 'all',
  batchSize: 16,
  seed: 11,
  jobId: job,
});

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  other = uniqueKeyspace();
  images = uniqueKeyspace();
  ledgerKs = uniqueKeyspace();
  const expected = await ingestSmallDataset(db, ks, N);
  await ingestSmallDataset(db, other, 40);
  await ingestImageDataset(db, images, 48, false);
  const ns = datasetNamespace(ks);
  keyOf = new Map([...expected.keys()].map((k) => [sampleId(k, ns), k]));
  allIds = sorted([...keyOf.keys()]);
  server = await startTestServer({ resumeKey, ledgerKeyspace: ledgerKs });
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
});

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  for (const k of [ks, other, images, ledgerKs]) if (k) await dropKeyspace(db, k);
  await db?.shutdown();
});

describe('the training ledger', () => {
  it('records every batch an out-of-order stream sends, and finds each sample in every epoch', async () => {
    const job = `ooo-${randomBytes(4).toString('hex')}`;
    const got = await receive(client, { ...base(job), epochs: 3, ordering: 'out-of-order' });
    for (const epoch of [0, 1, 2]) {
      const sent = got.batches.filter((b) => b.epoch === epoch);
      const rows = await ledgerOf(job, epoch, 0);
      // Batch for batch: the same indexes, the same ids in the same order.
      expect(rows.map((r) => ({ epoch: r.epoch, index: r.index, ids: r.ids }))).toEqual(sent);
      expect(rows.every((r) => !r.superseded && r.worldSize === 1 && r.rank === 0)).toBe(true);
      expect(sorted(rows.flatMap((r) => r.ids))).toEqual(allIds);
      // Source keys come with the ids, in the same order.
      expect(rows[0]!.sourceKeys).toEqual(rows[0]!.ids.map((id) => keyOf.get(id)));
      // The resume token stored is the one sent with the batch.
      expect(rows.at(-1)!.resumeToken.length).toBeGreaterThan(0);
    }
    const sample = allIds[7]!;
    const byKey = await client.getLedger(job, { sample: { sourceKey: keyOf.get(sample)! } });
    expect(byKey.sampleId).toBe(sample);
    const places = got.batches.flatMap((b) =>
      b.ids.flatMap((id, position) =>
        id === sample ? [{ epoch: b.epoch, batchIndex: b.index, position }] : [],
      ),
    );
    expect(places).toHaveLength(3);
    expect(
      byKey.appearances.map((a) => ({
        epoch: a.epoch,
        batchIndex: a.batchIndex,
        position: a.position,
      })),
    ).toEqual(places);
    const byId = await client.getLedger(job, {
      sample: { id: Buffer.from(sample.replaceAll('-', ''), 'hex') },
    });
    expect(byId.appearances).toEqual(byKey.appearances);
    // Each batch's recording is timed, once.
    expect(await metric(server, 'scylla_loader_ledger_write_duration_seconds_count')).toBe(
      got.batches.length,
    );
    // Metadata columns ride along on request.
    const withColumns = await client.getLedger(job, {
      batches: { epoch: 0, rank: 0, first: 0, last: 0 },
      columns: ['group'],
    });
    expect(withColumns.batches[0]!.columns['group']!.values).toHaveLength(16);
  });

  it('marks superseded what a trainer rolled back past, and each epoch stays the split once', async () => {
    const job = `rollback-${randomBytes(4).toString('hex')}`;
    const req = { ...base(job), epochs: 2 };
    // Rank 0 takes 12 batches, then the trainer goes back to its checkpoint after batch 4.
    const first: Received = { batches: [] };
    let checkpoint: Buffer | undefined;
    for await (const b of client.streamBatches(req)) {
      first.batches.push({ epoch: b.epoch, index: b.index, ids: [...b.ids] });
      if (first.batches.length === 5) checkpoint = Buffer.from(b.resumeToken);
      if (first.batches.length === 12) break;
    }
    const kept = first.batches.slice(0, 5);
    const resumed = await receive(client, { ...req, resumeToken: checkpoint! });
    const trained = [...kept, ...resumed.batches];
    for (const epoch of [0, 1]) {
      const live = await ledgerOf(job, epoch, 0);
      expect(live.map((r) => ({ epoch: r.epoch, index: r.index, ids: r.ids }))).toEqual(
        trained.filter((b) => b.epoch === epoch),
      );
      expect(sorted(live.flatMap((r) => r.ids))).toEqual(allIds);
    }
    const all = await client.getLedger(job, {
      batches: { epoch: 0, rank: 0, first: 5, last: 11 },
      includeSuperseded: true,
    });
    const stale = all.batches.filter((b) => b.superseded);
    // The 7 batches received after the checkpoint are superseded (the stream may have
    // recorded one more it never sent before the break reached it).
    expect(stale.map((b) => b.ids).slice(0, 7)).toEqual(
      first.batches.slice(5, 12).map((b) => b.ids),
    );
    // A sample of a superseded batch is found once live per epoch, and its stale
    // appearance only when asked for.
    const moved = first.batches[6]!.ids[0]!;
    const live = await client.getLedger(job, { sample: { sourceKey: keyOf.get(moved)! } });
    expect(live.appearances.map((a) => a.epoch)).toEqual([0, 1]);
    const everything = await client.getLedger(job, {
      sample: { sourceKey: keyOf.get(moved)! },
      includeSuperseded: true,
    });
    expect(everything.appearances.filter((a) => a.superseded)).toHaveLength(1);
  });

  it('keeps a 4-rank job exact through broken streams and a re-shard to 3 mid-epoch', async () => {
    const job = `elastic-${randomBytes(4).toString('hex')}`;
    const req = { ...base(job), epochs: 2, ordering: 'out-of-order' as const };
    // World 4 (10 batches per rank and epoch): each rank breaks off, reconnects from its
    // token, and stops mid-epoch after 3, 5, 7 and 9 batches.
    const ranks = await Promise.all(
      [0, 1, 2, 3].map(async (rank) => {
        const r = await receive(client, { ...req, rank, worldSize: 4 }, 1 + rank);
        return receive(client, { ...req, rank, worldSize: 4, resumeToken: r.token! }, 2 + rank, r);
      }),
    );
    const checkpoint = Buffer.from(
      mergeResumeTokens({
        worldSize: 4,
        ranks: ranks.map((r, rank) => ({ rank, epoch: 0, resumeToken: r.token! })),
      }),
    );
    // World 3 continues the job from the checkpoint; rank 1 breaks once more on the way.
    const next = await Promise.all(
      [0, 1, 2].map(async (rank) => {
        const r = await receive(
          client,
          { ...req, rank, worldSize: 3, jobCheckpoint: checkpoint },
          rank === 1 ? 4 : Infinity,
        );
        if (rank !== 1) return r;
        return receive(
          client,
          { ...req, rank, worldSize: 3, jobCheckpoint: checkpoint, resumeToken: r.token! },
          Infinity,
          r,
        );
      }),
    );
    const received = [...ranks, ...next];
    for (const epoch of [0, 1]) {
      const live = (
        await Promise.all(
          [0, 1, 2, 3].map(async (rank) => {
            const rows = await client.getLedger(job, {
              batches: { epoch, rank, first: 0, last: 999 },
            });
            return rows.batches;
          }),
        )
      ).flat();
      // The ledger's live batches are what the trainers received, batch for batch.
      const key = (b: { ids: string[] }) => b.ids.join(',');
      const got = received.flatMap((r) => r.batches.filter((b) => b.epoch === epoch));
      expect(sorted(live.map(key))).toEqual(sorted(got.map(key)));
      expect(sorted(live.flatMap((b) => b.ids))).toEqual(allIds);
      if (epoch === 0) {
        const resharded = live.filter((b) => b.worldSize === 3);
        expect(resharded.length).toBeGreaterThan(0);
        expect(resharded.every((b) => b.reshardedFrom.length === 32)).toBe(true);
      }
    }
  });

  it('records a mixture exactly through two SIGKILLs of its loader, then replays and skips in it', async () => {
    // Three loaders of one deployment: one resume key, one ledger.
    const env = { SCYLLA_LOADER_RESUME_KEY: resumeKey, SCYLLA_LOADER_LEDGER_KEYSPACE: ledgerKs };
    const loaders = await Promise.all([0, 1, 2].map(() => startServeCli(1, [], env)));
    const job = `mix-${randomBytes(4).toString('hex')}`;
    const req: StreamBatchesOptions = {
      sources: [
        { dataset: ks, split: 'all', weight: 1, repeat: true },
        { dataset: other, split: 'all', weight: 1, repeat: true },
      ],
      samplesPerEpoch: 1600,
      batchSize: 16,
      seed: 3,
      jobId: job,
    };
    type Got = { index: number; ids: string[]; sources: number[] };
    const got: Got[] = [];
    const tokens: Buffer[] = [];
    try {
      for (const [i, loader] of loaders.entries()) {
        // The smallest HTTP/2 window and one batch read ahead: a killed loader has recorded
        // (and written to its socket) batches its trainer never receives.
        const c = new LoaderClient(`127.0.0.1:${loader.port}`, {
          reconnect: { attempts: 0 },
          flowControlWindow: 65_535,
          maxBufferedBatches: 1,
        });
        const token = got.length > 0 ? tokens.at(-1) : undefined;
        let taken = 0;
        try {
          for await (const b of c.streamBatches({
            ...req,
            ...(token ? { resumeToken: token } : {}),
          })) {
            got.push({ index: b.index, ids: [...b.ids], sources: [...b.sourceIndexes!] });
            tokens.push(Buffer.from(b.resumeToken));
            if (++taken === 25 && i < 2) loader.child.kill('SIGKILL');
          }
        } catch (err) {
          expect(err).toBeInstanceOf(ClientError);
          expect(i).toBeLessThan(2);
        } finally {
          c.close();
        }
      }
    } finally {
      for (const l of loaders) l.child.kill('SIGKILL');
      await Promise.allSettled(loaders.map((l) => l.done));
    }
    expect(got).toHaveLength(100);
    const rows = await client.getLedger(job, {
      batches: { epoch: 0, rank: 0, first: 0, last: 999 },
    });
    expect(rows.sources.map((s) => s.dataset)).toEqual([ks, other]);
    expect(
      rows.batches.map((b) => ({ index: b.index, ids: b.ids, sources: b.sourceIndexes })),
    ).toEqual(got);
    // The killed loaders recorded batches their trainer never received: superseded, not lost.
    const everything = await client.getLedger(job, {
      batches: { epoch: 0, rank: 0, first: 0, last: 999 },
      includeSuperseded: true,
    });
    expect(everything.batches.filter((b) => b.superseded).length).toBeGreaterThan(0);
    // The mixture replays: the same samples, from the same sources, in the same order.
    const again: Got[] = [];
    for await (const b of client.streamBatches({
      ...req,
      replay: { epoch: 0, rank: 0, first: 20, last: 29 },
    })) {
      again.push({ index: b.index, ids: [...b.ids], sources: [...b.sourceIndexes!] });
    }
    expect(again).toEqual(got.slice(20, 30));
    // And skips: back to the token of batch 40, leaving out batches 41..45.
    const rest: Got[] = [];
    const skip = { ...req, resumeToken: tokens[40]!, skipBatches: { first: 41, last: 45 } };
    for await (const b of client.streamBatches(skip)) {
      rest.push({ index: b.index, ids: [...b.ids], sources: [...b.sourceIndexes!] });
    }
    expect(rest[0]!.index).toBe(46);
    const flat = (bs: Got[]) => sorted(bs.flatMap((b) => b.ids));
    // The epoch is the same multiset of samples: kept + skipped + the rest.
    expect(flat([...got.slice(0, 41), ...got.slice(41, 46), ...rest])).toEqual(flat(got));
    const after = await client.getLedger(job, {
      batches: { epoch: 0, rank: 0, first: 0, last: 999 },
    });
    expect(after.batches.filter((b) => b.skipped).map((b) => b.ids)).toEqual(
      got.slice(41, 46).map((b) => b.ids),
    );
    expect(after.batches.filter((b) => !b.skipped).map((b) => b.ids)).toEqual(
      [...got.slice(0, 41), ...rest].map((b) => b.ids),
    );
  });

  it('skips the batches after a checkpoint: the epoch without exactly their samples, once each', async () => {
    const job = `skip-${randomBytes(4).toString('hex')}`;
    const req = { ...base(job), epochs: 2, ordering: 'out-of-order' as const };
    // The trainer checkpoints after batch 4 (S = 4), trains on 5..20, then its loss spikes.
    const first: Received = { batches: [] };
    let checkpoint: Buffer | undefined;
    for await (const b of client.streamBatches(req)) {
      first.batches.push({ epoch: b.epoch, index: b.index, ids: [...b.ids] });
      if (b.index === 4) checkpoint = Buffer.from(b.resumeToken);
      if (b.index === 20) break;
    }
    // Back to the checkpoint, leaving out batches 5..12 (N = 8).
    const skipped = first.batches.filter((b) => b.index >= 5 && b.index <= 12);
    const resumed = await receive(client, {
      ...req,
      resumeToken: checkpoint!,
      skipBatches: { first: 5, last: 12 },
    });
    const kept = first.batches.filter((b) => b.index <= 4);
    const epoch0 = [...kept, ...resumed.batches.filter((b) => b.epoch === 0)];
    const left = new Set(skipped.flatMap((b) => b.ids));
    expect(sorted(epoch0.flatMap((b) => b.ids))).toEqual(allIds.filter((id) => !left.has(id)));
    // The continued epoch numbers its batches after the skipped ones.
    expect(resumed.batches[0]!.index).toBe(13);
    // Later epochs are whole.
    expect(sorted(resumed.batches.filter((b) => b.epoch === 1).flatMap((b) => b.ids))).toEqual(
      allIds,
    );
    // The ledger lists the skipped batches, marked; the live ones are what was trained on.
    const rows = await ledgerOf(job, 0, 0);
    expect(rows.filter((r) => r.skipped).map((r) => r.ids)).toEqual(skipped.map((b) => b.ids));
    expect(rows.filter((r) => !r.skipped).map((r) => r.ids)).toEqual(epoch0.map((b) => b.ids));
    // A range the ledger does not hold is refused, naming the first missing batch.
    const err = await receive(client, {
      ...req,
      resumeToken: checkpoint!,
      skipBatches: { first: 5, last: 200 },
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      codeName: 'INVALID_ARGUMENT',
      details: expect.stringMatching(/skip_batches names batch \d+ of epoch 0, rank 0 of 1/),
    });
  });

  it('replays a recorded range byte for byte, with and without a transform', async () => {
    const bytes = (b: DecodedBatch) => ({
      index: b.index,
      epoch: b.epoch,
      ids: b.ids,
      labels: [...b.labels],
      data: Buffer.from(b.data).toString('base64'),
      token: Buffer.from(b.resumeToken).toString('base64'),
    });
    const all = async (c: LoaderClient, req: StreamBatchesOptions): Promise<DecodedBatch[]> => {
      const out: DecodedBatch[] = [];
      for await (const b of c.streamBatches(req)) out.push(b);
      return out;
    };
    const plain = `replay-${randomBytes(4).toString('hex')}`;
    const sent = await all(client, { ...base(plain), epochs: 2, ordering: 'out-of-order' });
    const again = await all(client, {
      ...base(plain),
      replay: { epoch: 1, rank: 0, first: 3, last: 6 },
    });
    const recorded = sent.filter((b) => b.epoch === 1 && b.index >= 3 && b.index <= 6);
    expect(again.map(bytes)).toEqual(recorded.map(bytes));

    const pixels = `replay-rrc-${randomBytes(4).toString('hex')}`;
    const transformed: StreamBatchesOptions = {
      dataset: images,
      split: 'all',
      batchSize: 8,
      seed: 4,
      jobId: pixels,
      transform: {
        channels: 3,
        randomResizedCrop: { height: 24, width: 20 },
        horizontalFlip: 0.5,
      },
    };
    const first = await all(client, { ...transformed, ordering: 'out-of-order' });
    const replayed = await all(client, {
      ...transformed,
      replay: { epoch: 0, rank: 0, first: 1, last: 3 },
    });
    expect(replayed.map(bytes)).toEqual(first.slice(1, 4).map(bytes));
    expect(replayed[0]!.tensor!.shape).toEqual([8, 24, 20, 3]);

    // A replay that asks for other job fields, or batches the ledger lacks, is refused.
    await expect(
      all(client, { ...base(plain), seed: 99, replay: { epoch: 1, rank: 0, first: 3 } }),
    ).rejects.toMatchObject({ codeName: 'FAILED_PRECONDITION' });
    await expect(
      all(client, { ...base(plain), replay: { epoch: 1, rank: 0, first: 3, last: 900 } }),
    ).rejects.toMatchObject({
      codeName: 'INVALID_ARGUMENT',
      details: expect.stringMatching(/batch \d+ of epoch 1, rank 0 is not in the ledger/),
    });
    // Nothing was recorded by the replays.
    const rows = await client.getLedger(plain, {
      batches: { epoch: 1, rank: 0, first: 0, last: 999 },
      includeSuperseded: true,
    });
    expect(rows.batches).toHaveLength(sent.filter((b) => b.epoch === 1).length);
  });

  it('shows, finds and drops a job through the CLI', async () => {
    const job = `cli-${randomBytes(4).toString('hex')}`;
    const got = await receive(client, { ...base(job), epochs: 3 });
    const env = dbEnv(testDbConfig());
    const ledger = ['--ledger-keyspace', ledgerKs];
    const show = await runCli(
      ['ledger', 'show', job, '--epoch', '1', '--rank', '0', '--batch', '2..3', ...ledger],
      env,
    );
    expect(show.stderr).toBe('');
    expect(show.code).toBe(0);
    const shown = got.batches.filter((b) => b.epoch === 1 && b.index >= 2 && b.index <= 3);
    const keys = shown.flatMap((b) => b.ids.map((id) => keyOf.get(id)!));
    // One line per sample, its source key, in the batches' order.
    const lines = show.stdout.split('\n').filter((l) => /^\s+\d+\s{2}/.test(l));
    expect(lines.map((l) => l.trim().split(/\s+/)[1])).toEqual(keys);
    expect(show.stdout).toContain('epoch 1  rank 0 of 1  batch 2');

    const sample = shown[0]!.ids[3]!;
    const find = await runCli(
      ['ledger', 'find', job, '--sample', keyOf.get(sample)!, '--json', ...ledger],
      env,
    );
    expect(find.code).toBe(0);
    const found = JSON.parse(find.stdout) as { id: string; appearances: { epoch: number }[] };
    expect(found.id).toBe(sample);
    expect(found.appearances.map((a) => a.epoch)).toEqual([0, 1, 2]);

    const bad = await runCli(
      ['ledger', 'show', job, '--epoch', '0', '--rank', '0', '--batch', '5..2', ...ledger],
      env,
    );
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('the range ends before it starts');

    const drop = await runCli(['ledger', 'drop', job, ...ledger], env);
    expect(drop.code).toBe(0);
    await expect(
      client.getLedger(job, { batches: { epoch: 0, rank: 0, first: 0 } }),
    ).rejects.toMatchObject({ codeName: 'NOT_FOUND' });
    const again = await runCli(['ledger', 'drop', job, ...ledger], env);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(`job ${job} has no training ledger`);
  });

  it('refuses a job id reused for another job, and bad ids and ranges, with their reasons', async () => {
    const job = `fields-${randomBytes(4).toString('hex')}`;
    await receive(client, { ...base(job), epochs: 1 }, 1);
    const err = await receive(client, { ...base(job), seed: 12 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect(err).toMatchObject({
      codeName: 'FAILED_PRECONDITION',
      details: expect.stringContaining(`ledger drop ${job}`),
    });
    expect(() => client.streamBatches({ ...base('no spaces'), epochs: 1 })).toThrow(RangeError);
    await expect(
      client.getLedger('never-streamed', { batches: { epoch: 0, rank: 0, first: 0 } }),
    ).rejects.toMatchObject({ codeName: 'NOT_FOUND' });
    await expect(
      client.getLedger(job, { batches: { epoch: 0, rank: 0, first: 0, last: 5000 } }),
    ).rejects.toMatchObject({
      codeName: 'INVALID_ARGUMENT',
      details: expect.stringContaining('over the 1000 one read returns'),
    });
  });

  it("checks the reader's grant against every dataset of the job", async () => {
    const job = `grant-${randomBytes(4).toString('hex')}`;
    const reader = newToken();
    const outsider = newToken();
    const entry = (name: string, token: string, datasets: string[]) => ({
      name,
      sha256: hashToken(token).toString('hex'),
      role: 'reader',
      datasets,
    });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sl-ledger-tokens-'));
    const tokensFile = path.join(dir, 'tokens.json');
    writeFileSync(
      tokensFile,
      JSON.stringify({
        tokens: [entry('trainer', reader, [ks]), entry('elsewhere', outsider, [other])],
      }),
    );
    const guarded = await startTestServer({
      resumeKey,
      ledgerKeyspace: ledgerKs,
      authTokensFile: tokensFile,
    });
    const asReader = new LoaderClient(`127.0.0.1:${guarded.port}`, { token: reader });
    const asOutsider = new LoaderClient(`127.0.0.1:${guarded.port}`, { token: outsider });
    try {
      await receive(asReader, { ...base(job), epochs: 1 }, 2);
      const rows = await asReader.getLedger(job, { batches: { epoch: 0, rank: 0, first: 0 } });
      expect(rows.batches).toHaveLength(1);
      await expect(
        asOutsider.getLedger(job, { batches: { epoch: 0, rank: 0, first: 0 } }),
      ).rejects.toMatchObject({
        codeName: 'PERMISSION_DENIED',
        details: expect.stringContaining(`may not use dataset "${ks}" (GetLedger)`),
      });
    } finally {
      asReader.close();
      asOutsider.close();
      await guarded.shutdown();
    }
  });

  it('adds the columns a ledger made by an older loader lacks', async () => {
    const oldKs = uniqueKeyspace();
    await db.execute(
      `CREATE KEYSPACE ${oldKs} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`,
    );
    // The batches table as the first ledger made it, before positions and skips.
    await db.execute(
      `CREATE TABLE ${oldKs}.batches (job_id text, epoch int, rank int, batch_index int, ` +
        'world_size int, segment blob, stream_id timeuuid, ids blob, source_indexes blob, ' +
        'resume_token blob, sent_at timestamp, superseded boolean, ' +
        'PRIMARY KEY ((job_id, epoch), rank, batch_index, world_size, segment, stream_id))',
    );
    const upgraded = await startTestServer({ resumeKey, ledgerKeyspace: oldKs });
    const c = new LoaderClient(`127.0.0.1:${upgraded.port}`, { reconnect: { attempts: 0 } });
    try {
      const job = `upgrade-${randomBytes(4).toString('hex')}`;
      const got = await receive(c, { ...base(job), epochs: 1 });
      const rows = await c.getLedger(job, { batches: { epoch: 0, rank: 0, first: 0, last: 999 } });
      expect(rows.batches.map((b) => b.ids)).toEqual(got.batches.map((b) => b.ids));
    } finally {
      c.close();
      await upgraded.shutdown();
      await dropKeyspace(db, oldKs);
    }
  });

  it('stops a stream with UNAVAILABLE when its ledger cannot be written, sending nothing unrecorded', async () => {
    const failingKs = uniqueKeyspace();
    const failing = await startTestServer({ resumeKey, ledgerKeyspace: failingKs });
    // A small HTTP/2 window and one batch read ahead: the loader cannot run far ahead.
    const c = new LoaderClient(`127.0.0.1:${failing.port}`, {
      reconnect: { attempts: 0 },
      flowControlWindow: 65_535,
      maxBufferedBatches: 1,
    });
    const replicas = (n: number) =>
      db.execute(
        `ALTER KEYSPACE ${failingKs} WITH replication = {'class': 'SimpleStrategy', 'replication_factor': ${n}}`,
      );
    const job = `unavailable-${randomBytes(4).toString('hex')}`;
    try {
      const got: Received = { batches: [] };
      let error: unknown;
      try {
        for await (const b of c.streamBatches({ ...base(job), epochs: 1 })) {
          got.batches.push({ epoch: b.epoch, index: b.index, ids: [...b.ids] });
          got.token = Buffer.from(b.resumeToken);
          // Mid-stream the ledger's keyspace wants 3 replicas of a 1-node cluster: no write
          // reaches LOCAL_QUORUM any more.
          if (got.batches.length === 3) await replicas(3);
        }
      } catch (err) {
        error = err;
      }
      expect(error).toMatchObject({
        codeName: 'UNAVAILABLE',
        details: expect.stringContaining('training ledger'),
      });
      expect(got.batches.length).toBeGreaterThanOrEqual(3);
      expect(got.batches.length).toBeLessThan(38);
      expect(await metric(failing, 'scylla_loader_ledger_write_failures_total')).toBeGreaterThan(0);
      // The database is back: the trainer resumes by token, and every batch it received, before
      // and after, is in the ledger.
      await replicas(1);
      const rest = await receive(c, { ...base(job), epochs: 1, resumeToken: got.token! });
      const rows = await c.getLedger(job, { batches: { epoch: 0, rank: 0, first: 0, last: 999 } });
      const received = [...got.batches, ...rest.batches];
      expect(rows.batches.map((b) => b.ids)).toEqual(received.map((b) => b.ids));
      expect(sorted(received.flatMap((b) => b.ids))).toEqual(allIds);
    } finally {
      c.close();
      await failing.shutdown();
      await dropKeyspace(db, failingKs);
    }
  });
});
