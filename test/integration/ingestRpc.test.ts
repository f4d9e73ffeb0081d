import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import cassandra from 'cassandra-driver';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientError,
  LoaderClient,
  type IngestSampleInput,
  type LoaderClientOptions,
} from '../../src/client/index.js';
import type { IngestSamplesRequest } from '../../src/proto/index.js';
import type { IngestSamplesResponse__Output } from '../../src/proto/index.js';
import {
  createDbClient,
  datasetNamespace,
  MAX_SAMPLE_BYTES,
  sampleId,
} from '../../src/core/index.js';
import { loadLoaderProto } from '../../src/testing/index.js';
import { hashToken } from '../../src/testing/index.js';
import { newToken } from '../../src/testing/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { FLOW_CONTROL_WINDOW_BYTES } from '../../src/server/index.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

const COLUMNS = { who: 'text', n: 'int', big: 'bigint', x: 'double', ok: 'boolean' } as const;
const LABELS = ['cat', 'dog', 'fox'];

let db: cassandra.Client;
let server: LoaderServer;
let client: LoaderClient;
const datasets: string[] = [];
const extraServers: LoaderServer[] = [];
const clients: LoaderClient[] = [];

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  server = await startServer();
  client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(extraServers.splice(0).map((s) => s.shutdown('test over')));
});

afterAll(async () => {
  client?.close();
  await server?.shutdown();
  for (const ks of datasets) await dropKeyspace(db, ks);
  await db?.shutdown();
});

/** A loader of test/support that drops its streams at once on shutdown. */
function startServer(overrides: Record<string, unknown> = {}): Promise<LoaderServer> {
  return startTestServer({ shutdownGraceMs: 0, ...overrides });
}

function newClient(port: number, options: LoaderClientOptions = {}): LoaderClient {
  const c = new LoaderClient(`127.0.0.1:${port}`, { reconnect: { attempts: 0 }, ...options });
  clients.push(c);
  return c;
}

function newDataset(): string {
  const ks = uniqueKeyspace();
  datasets.push(ks);
  return ks;
}

/** A small deterministic generator (xorshift32), so a failing run can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/**
 * `n` samples of 1 to 6 KiB of random bytes: every third has a label blob, every seventh a
 * blob and no label; metadata of every type, some values left out.
 */
function samples(n: number, seed = 1, prefix = 'img'): IngestSampleInput[] {
  const rnd = random(seed);
  return Array.from({ length: n }, (_, i) => {
    const data = Buffer.alloc(1024 + Math.floor(rnd() * 5 * 1024));
    for (let b = 0; b < data.length; b++) data[b] = Math.floor(rnd() * 256);
    const blob = i % 3 === 0 || i % 7 === 0 ? Buffer.from([i & 255, 1, 2, 3]) : undefined;
    const metadata: IngestSampleInput['metadata'] = {
      who: `person ${i % 11}`,
      n: i % 5 === 0 ? null : i - 150,
      big: BigInt(i) * 10_000_000_000n,
      x: i / 8 + 0.125,
      ...(i % 4 === 0 ? {} : { ok: i % 2 === 0 }),
    };
    return {
      sourceKey: `${prefix}/${String(i).padStart(4, '0')}.bin`,
      data,
      ...(i % 7 === 0 ? {} : { label: i % LABELS.length }),
      ...(blob ? { labelBlob: blob } : {}),
      metadata,
    };
  });
}

interface StoredRow {
  label: number | null;
  labelBlob: string | null;
  data: string;
  sourceKey: string;
  sizeBytes: number;
  metadata: Record<string, unknown>;
}

/** Every stored sample by id: both tables joined, values in comparable form. */
async function storedRows(ks: string): Promise<Map<string, StoredRow>> {
  const rows = new Map<string, StoredRow>();
  const data = new Map<string, cassandra.types.Row>();
  // Test tables are small: one page each.
  const all = { prepare: true, fetchSize: 100_000 };
  const dataRows = await db.execute(
    `SELECT id, label, label_blob, data FROM ${ks}.samples`,
    [],
    all,
  );
  for (const r of dataRows.rows) data.set(String(r['id']), r);
  const metaRows = await db.execute(`SELECT * FROM ${ks}.metadata`, [], all);
  for (const r of metaRows.rows) {
    const id = String(r['id']);
    const d = data.get(id);
    expect(d, `data row of ${id}`).toBeDefined();
    const big = r['big'] as cassandra.types.Long | null;
    rows.set(id, {
      label: r['label'] as number | null,
      labelBlob: (d!['label_blob'] as Buffer | null)?.toString('hex') ?? null,
      data: (d!['data'] as Buffer).toString('hex'),
      sourceKey: String(r['source_key']),
      sizeBytes: r['size_bytes'] as number,
      metadata: {
        who: r['who'],
        n: r['n'],
        big: big === null ? null : BigInt(big.toString()),
        x: r['x'],
        ok: r['ok'],
      },
    });
    expect(d!['label']).toBe(r['label']);
  }
  expect(data.size).toBe(rows.size);
  return rows;
}

/** What {@link storedRows} must hold for the samples sent. */
function expectedRows(ks: string, sent: readonly IngestSampleInput[]): Map<string, StoredRow> {
  const ns = datasetNamespace(ks);
  return new Map(
    sent.map((s) => [
      sampleId(s.sourceKey, ns),
      {
        label: s.label ?? null,
        labelBlob: s.labelBlob ? Buffer.from(s.labelBlob).toString('hex') : null,
        data: Buffer.from(s.data).toString('hex'),
        sourceKey: s.sourceKey,
        sizeBytes: s.data.length,
        metadata: {
          who: s.metadata?.who ?? null,
          n: s.metadata?.n ?? null,
          big: s.metadata?.big ?? null,
          x: s.metadata?.x ?? null,
          ok: s.metadata?.ok ?? null,
        },
      },
    ]),
  );
}

async function countRows(ks: string): Promise<{ samples: number; metadata: number }> {
  const count = async (table: string): Promise<number> =>
    Number((await db.execute(`SELECT COUNT(*) FROM ${ks}.${table}`)).first()!['count']);
  return { samples: await count('samples'), metadata: await count('metadata') };
}

async function failureOf(promise: Promise<unknown>): Promise<ClientError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ClientError);
  return error as ClientError;
}

/** A raw IngestSamples call: the requests are written, then the call half-closes. */
async function rawCall(
  port: number,
  requests: IngestSamplesRequest[],
): Promise<{ responses: IngestSamplesResponse__Output[]; status: grpc.StatusObject }> {
  const Service = loadLoaderProto().scylla_loader.v1.LoaderService;
  const raw = new Service(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  try {
    const call = raw.ingestSamples({ deadline: Date.now() + 60_000 });
    const responses: IngestSamplesResponse__Output[] = [];
    call.on('data', (r: IngestSamplesResponse__Output) => responses.push(r));
    call.on('error', () => undefined);
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    for (const r of requests) call.write(r);
    call.end();
    return { responses, status: await status };
  } finally {
    raw.close();
  }
}

describe('IngestSamples through the TypeScript SDK', () => {
  it('stores exactly what was sent, and a second ingest of it changes nothing', async () => {
    const ks = newDataset();
    const sent = samples(300);
    const progress: number[] = [];
    const summary = await client.ingest(ks, sent, {
      labelNames: LABELS,
      columns: COLUMNS,
      source: 'test:ingestRpc',
      onProgress: (p) => progress.push(p.acknowledged),
    });
    expect(summary).toEqual({
      acknowledged: 300,
      written: 300,
      alreadyPresent: 0,
      skipped: 0,
      skippedSamples: [],
      datasetSamples: 300,
    });
    // One progress report per request (64 samples or 4 MiB), rising to the total.
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(300);
    expect(progress.length).toBeGreaterThanOrEqual(5);
    expect(await storedRows(ks)).toEqual(expectedRows(ks, sent));

    const described = await client.describeDataset(ks);
    expect(described).toMatchObject({
      sampleCount: 300,
      totalBytes: sent.reduce((a, s) => a + s.data.length, 0),
      labelNames: LABELS,
      columns: expect.objectContaining(COLUMNS),
    });
    const info = (
      await db.execute(`SELECT sources FROM ${ks}.dataset_info WHERE dataset = ?`, [ks])
    ).first()!;
    expect(info['sources']).toEqual(['test:ingestRpc']);

    const writeTimes = async (): Promise<Map<string, string>> => {
      const rs = await db.execute(`SELECT id, WRITETIME(data) AS wt FROM ${ks}.samples`);
      return new Map(rs.rows.map((r) => [String(r['id']), String(r['wt'])]));
    };
    const before = await writeTimes();
    const again = await client.ingest(ks, sent, { labelNames: LABELS, columns: COLUMNS });
    expect(again).toMatchObject({ acknowledged: 300, written: 0, alreadyPresent: 300, skipped: 0 });
    expect(await writeTimes()).toEqual(before);
    expect(await storedRows(ks)).toEqual(expectedRows(ks, sent));
    // Both calls ended OK on the loader's side too (the SDK waits for the status).
    const errors = await server.context.metrics.streamErrors.get();
    expect(errors.values.filter((v) => v.value > 0)).toEqual([]);
  });

  it('infers the columns from the first request when none are given', async () => {
    const ks = newDataset();
    const summary = await client.ingest(ks, samples(20), { labelNames: LABELS });
    expect(summary.written).toBe(20);
    expect((await client.describeDataset(ks)).columns).toMatchObject({
      who: 'text',
      n: 'bigint',
      big: 'bigint',
      x: 'double',
      ok: 'boolean',
    });
  });

  it('refuses a sample over the size limit under fail, naming it and the limit; skips it under skip', async () => {
    const ks = newDataset();
    const sent = samples(40, 2);
    sent[10] = { ...sent[10]!, data: Buffer.alloc(MAX_SAMPLE_BYTES + 1, 7) };
    const error = await failureOf(
      client.ingest(ks, sent, { labelNames: LABELS, columns: COLUMNS, samplesPerRequest: 4 }),
    );
    expect(error.codeName).toBe('INVALID_ARGUMENT');
    expect(error.details).toMatch(
      new RegExp(
        `^sample "img/0010\\.bin" in request 4 of this call is ${MAX_SAMPLE_BYTES + 1} bytes ` +
          `with its label blob, over the limit of ${MAX_SAMPLE_BYTES} bytes`,
      ),
    );
    // Over 4 MiB, it went alone in request 4; the three requests before it (samples 0 to 9)
    // were acknowledged and are stored.
    const stored = [...(await storedRows(ks)).values()].map((r) => r.sourceKey).sort();
    expect(stored).toEqual(sent.slice(0, 10).map((s) => s.sourceKey));

    const skipped = await client.ingest(ks, sent, {
      labelNames: LABELS,
      columns: COLUMNS,
      badSamplePolicy: 'skip',
      samplesPerRequest: 4,
    });
    expect(skipped).toMatchObject({
      acknowledged: 40,
      written: 29,
      alreadyPresent: 10,
      skipped: 1,
    });
    expect(skipped.skippedSamples).toEqual([
      {
        sourceKey: 'img/0010.bin',
        reason: expect.stringMatching(
          new RegExp(`^is ${MAX_SAMPLE_BYTES + 1} bytes .* over the limit of ${MAX_SAMPLE_BYTES}`),
        ),
      },
    ]);
    const good = sent.filter((_, i) => i !== 10);
    expect(await storedRows(ks)).toEqual(expectedRows(ks, good));
  });

  it('refuses a label out of range and a metadata value of the wrong kind; skips them under skip', async () => {
    const ks = newDataset();
    const sent = samples(30, 3);
    sent[5] = { ...sent[5]!, label: 3 };
    sent[20] = { ...sent[20]!, metadata: { ...sent[20]!.metadata, n: 'five' } };
    const options = { labelNames: LABELS, columns: COLUMNS };
    const label = await failureOf(client.ingest(ks, sent, options));
    expect(label).toMatchObject({ codeName: 'INVALID_ARGUMENT' });
    expect(label.details).toMatch(
      /^sample "img\/0005\.bin" in request 1 of this call has label 3, but the dataset has 3 classes \(labels 0 to 2\)/,
    );
    const kind = await failureOf(client.ingest(ks, sent.slice(10), options));
    expect(kind.details).toMatch(
      /^sample "img\/0020\.bin" in request 1 of this call has metadata "n" is a text value, but the column is int/,
    );

    const summary = await client.ingest(ks, sent, { ...options, badSamplePolicy: 'skip' });
    expect(summary).toMatchObject({ acknowledged: 30, written: 28, skipped: 2 });
    expect(summary.skippedSamples).toEqual([
      {
        sourceKey: 'img/0005.bin',
        reason: 'has label 3, but the dataset has 3 classes (labels 0 to 2)',
      },
      {
        sourceKey: 'img/0020.bin',
        reason: 'has metadata "n" is a text value, but the column is int (it takes int values)',
      },
    ]);
    const good = sent.filter((_, i) => i !== 5 && i !== 20);
    expect(await storedRows(ks)).toEqual(expectedRows(ks, good));
  });

  it('refuses class names other than the stored ones, and a column type that is not one', async () => {
    const ks = newDataset();
    await client.ingest(ks, samples(3), { labelNames: LABELS, columns: COLUMNS });
    const names = await failureOf(
      client.ingest(ks, samples(3), { labelNames: ['a', 'b', 'c'], columns: COLUMNS }),
    );
    expect(names).toMatchObject({ codeName: 'INVALID_ARGUMENT' });
    expect(names.details).toMatch(/already maps labels to \["cat","dog","fox"\]/);
    const type = await failureOf(
      client.ingest(newDataset(), samples(3), {
        columns: { who: 'varchar' as 'text' },
      }),
    );
    expect(type.details).toBe(
      'target column "who" has type "varchar"; use one of text, int, bigint, double, boolean',
    );
  });
});

describe('IngestSamples, the raw call', () => {
  it('answers every request in order, then done with the dataset count', async () => {
    const ks = newDataset();
    const requests: IngestSamplesRequest[] = Array.from({ length: 20 }, (_, i) => ({
      ...(i === 0 ? { target: { dataset: ks } } : {}),
      // Request sizes vary (and request 7 is empty), so writes finish out of order.
      samples: Array.from({ length: i === 7 ? 0 : 1 + ((i * 7) % 13) }, (_, j) => ({
        sourceKey: `r${i}/s${j}`,
        data: Buffer.alloc(100 + ((i * 131 + j * 977) % 20_000), i),
        label: i,
      })),
    }));
    const { responses, status } = await rawCall(server.port, requests);
    expect(status.code).toBe(grpc.status.OK);
    const total = requests.reduce((a, r) => a + r.samples!.length, 0);
    expect(responses.map((r) => Number(r.acknowledgedRequests))).toEqual([
      ...Array.from({ length: 20 }, (_, i) => i + 1),
      20,
    ]);
    expect(responses.map((r) => r.done)).toEqual([...Array<boolean>(20).fill(false), true]);
    let samplesSoFar = 0;
    responses.slice(0, 20).forEach((r, i) => {
      samplesSoFar += requests[i]!.samples!.length;
      expect(Number(r.acknowledgedSamples)).toBe(samplesSoFar);
      expect(Number(r.written)).toBe(samplesSoFar);
    });
    expect(responses.at(-1)).toMatchObject({
      done: true,
      datasetSamples: String(total),
      written: String(total),
    });
    expect(await countRows(ks)).toEqual({ samples: total, metadata: total });
  });

  it('refuses a first request without target, and a call without any request', async () => {
    const missing = await rawCall(server.port, [
      { samples: [{ sourceKey: 'a', data: Buffer.from('x'), label: 0 }] },
    ]);
    expect(missing.status.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(missing.status.details).toMatch(
      /^the first request of an IngestSamples call must carry target/,
    );
    expect(missing.responses).toEqual([]);
    const empty = await rawCall(server.port, []);
    expect(empty.status.code).toBe(grpc.status.INVALID_ARGUMENT);
    const badName = await rawCall(server.port, [{ target: { dataset: 'Not-A-Name' } }]);
    expect(badName.status).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    expect(badName.status.details).toMatch(/^invalid dataset name "Not-A-Name"/);
  });
});

describe("the loader's receive window", () => {
  it('is raised to 64 MiB for the connection and its streams, so uploads are not capped per round trip', async () => {
    const session = http2.connect(`http://127.0.0.1:${server.port}`);
    try {
      // The loader's first SETTINGS carry the defaults; the raised window follows at once, in
      // a second SETTINGS (streams) and a WINDOW_UPDATE (the connection).
      await once(session, 'remoteSettings');
      for (let i = 0; ; i++) {
        const streams = session.remoteSettings.initialWindowSize;
        const connection = session.state.remoteWindowSize;
        if (streams === FLOW_CONTROL_WINDOW_BYTES && connection === FLOW_CONTROL_WINDOW_BYTES)
          break;
        expect(i, `stream window ${streams}, connection window ${connection}`).toBeLessThan(100);
        await sleep(10);
      }
    } finally {
      session.destroy();
    }
  });
});

describe('IngestSamples with tokens', () => {
  it('lets writers and admins ingest into their datasets and refuses readers and other datasets', async () => {
    const ks = newDataset();
    const reader = newToken();
    const writer = newToken();
    const otherWriter = newToken();
    const admin = newToken();
    const entry = (name: string, token: string, role: string, granted: string[]) => ({
      name,
      sha256: hashToken(token).toString('hex'),
      role,
      datasets: granted,
    });
    const tokensFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'sl-tokens-')), 'tokens.json');
    writeFileSync(
      tokensFile,
      JSON.stringify({
        tokens: [
          entry('trainer', reader, 'reader', [ks]),
          entry('etl', writer, 'writer', [ks]),
          entry('etl-b', otherWriter, 'writer', ['somewhere_else']),
          entry('ops', admin, 'admin', ['*']),
        ],
      }),
    );
    const secured = await startServer({ authTokensFile: tokensFile });
    extraServers.push(secured);
    const options = { labelNames: LABELS, columns: COLUMNS };

    const asReader = await failureOf(
      newClient(secured.port, { token: reader }).ingest(ks, samples(5), options),
    );
    expect(asReader).toMatchObject({
      codeName: 'PERMISSION_DENIED',
      details:
        'token "trainer" has role reader, and IngestSamples needs role writer; ask for a token with that role',
    });
    const elsewhere = await failureOf(
      newClient(secured.port, { token: otherWriter }).ingest(ks, samples(5), options),
    );
    expect(elsewhere).toMatchObject({
      codeName: 'PERMISSION_DENIED',
      details: `token "etl-b" may not use dataset "${ks}" (IngestSamples); its grant covers somewhere_else`,
    });
    // Nothing was made for the refused calls.
    const made = await db.execute(
      'SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?',
      [ks],
    );
    expect(made.rowLength).toBe(0);
    const noToken = await failureOf(newClient(secured.port).ingest(ks, samples(5), options));
    expect(noToken.codeName).toBe('UNAUTHENTICATED');

    const asWriter = newClient(secured.port, { token: writer });
    expect((await asWriter.ingest(ks, samples(50), options)).written).toBe(50);
    const asAdmin = newClient(secured.port, { token: admin });
    expect((await asAdmin.ingest(ks, samples(60), options)).written).toBe(10);
    const refused = await secured.context.metrics.callsRefused.get();
    expect(
      Object.fromEntries(
        refused.values
          .filter((v) => v.value > 0)
          .map((v) => [`${String(v.labels.rpc)} ${String(v.labels.code)}`, v.value]),
      ),
    ).toEqual({ 'IngestSamples PERMISSION_DENIED': 2, 'IngestSamples UNAUTHENTICATED': 1 });
  });
});

describe('IngestSamples cut mid-way', () => {
  /** Source keys stored, with how often each is (each must be once). */
  async function storedKeys(ks: string): Promise<string[]> {
    return [...(await storedRows(ks)).values()].map((r) => r.sourceKey).sort();
  }

  it("a cancelled ingest stops the loader's writes; a second ingest ends with every sample once", async () => {
    const ks = newDataset();
    const sent = samples(400, 5);
    const abort = new AbortController();
    const first = client.ingest(ks, sent, {
      labelNames: LABELS,
      columns: COLUMNS,
      samplesPerRequest: 8,
      signal: abort.signal,
      onProgress: (p) => {
        if (p.acknowledged >= 100) abort.abort(new Error('enough'));
      },
    });
    await expect(first).rejects.toThrow('enough');
    // The loader's work for the call stops: the call closes and its writes stop.
    const metrics = server.context.metrics;
    const written = async (): Promise<number> =>
      (await metrics.ingestSamples.get()).values
        .filter((v) => v.labels.outcome === 'written')
        .reduce((a, v) => a + v.value, 0);
    for (let i = 0; (await metrics.activeStreams.get()).values[0]!.value > 0; i++) {
      expect(i).toBeLessThan(100);
      await sleep(50);
    }
    // The slot is released at the cancel, while the writes the call had started may still be
    // settling: wait until the count stands still, then check that it stays so.
    let settled = await written();
    for (let i = 0; ; i++) {
      await sleep(300);
      const now = await written();
      if (now === settled) break;
      expect(i).toBeLessThan(20);
      settled = now;
    }
    await sleep(500);
    expect(await written()).toBe(settled);
    const partial = await countRows(ks);
    expect(partial.metadata).toBeGreaterThanOrEqual(100);
    expect(partial.metadata).toBeLessThan(400);

    const second = await client.ingest(ks, sent, { labelNames: LABELS, columns: COLUMNS });
    expect(second.acknowledged).toBe(400);
    expect(second.alreadyPresent).toBeGreaterThanOrEqual(100);
    expect(second.written + second.alreadyPresent).toBe(400);
    expect(second.datasetSamples).toBe(400);
    expect(await storedKeys(ks)).toEqual(sent.map((s) => s.sourceKey).sort());
    expect(await storedRows(ks)).toEqual(expectedRows(ks, sent));
  });

  it('a loader stopped mid-way: the SDK resends the unacknowledged requests to its successor', async () => {
    const ks = newDataset();
    const sent = samples(600, 6);
    const first = await startServer();
    const port = first.port;
    let successor: LoaderServer | undefined;
    let restart: Promise<void> | undefined;
    const reconnects: string[] = [];
    const resilient = newClient(port, {
      reconnect: { attempts: 30, initialBackoffMs: 50, maxBackoffMs: 300 },
    });
    const summary = await resilient.ingest(ks, sent, {
      labelNames: LABELS,
      columns: COLUMNS,
      samplesPerRequest: 8,
      onReconnect: (r) => reconnects.push(r.codeName),
      onProgress: (p) => {
        if (p.acknowledged >= 150 && restart === undefined) {
          restart = (async () => {
            await first.shutdown('test: stop mid-ingest');
            successor = await startServer({ port });
            extraServers.push(successor);
          })();
        }
      },
    });
    await restart;
    expect(successor).toBeDefined();
    expect(reconnects.length).toBeGreaterThanOrEqual(1);
    expect(reconnects.every((c) => c === 'UNAVAILABLE' || c === 'CANCELLED')).toBe(true);
    expect(summary.acknowledged).toBe(600);
    expect(summary.written + summary.alreadyPresent).toBe(600);
    expect(summary.datasetSamples).toBe(600);
    expect(await countRows(ks)).toEqual({ samples: 600, metadata: 600 });
    expect(await storedRows(ks)).toEqual(expectedRows(ks, sent));
  });
});

describe('IngestSamples bounds on schema, bookkeeping and recounts', () => {
  /** The user metadata columns of a dataset's table, sorted. */
  async function metadataColumns(ks: string): Promise<string[]> {
    const rs = await db.execute(
      'SELECT column_name FROM system_schema.columns WHERE keyspace_name = ? AND table_name = ?',
      [ks, 'metadata'],
      { prepare: true },
    );
    const builtIn = ['id', 'label', 'source_key', 'size_bytes'];
    return rs.rows
      .map((r) => String(r['column_name']))
      .filter((c) => !builtIn.includes(c))
      .sort();
  }

  it('refuses a target of 5,000 metadata columns before any schema change, naming the cap', async () => {
    const ks = newDataset();
    await client.ingest(ks, samples(5), { labelNames: LABELS, columns: COLUMNS });
    const before = await metadataColumns(ks);
    expect(before).toEqual(Object.keys(COLUMNS).sort());

    const wide = Object.fromEntries(
      Array.from({ length: 5000 }, (_, i) => [`c${i}`, 'int' as const]),
    );
    const error = await failureOf(client.ingest(ks, samples(5, 9, 'wide'), { columns: wide }));
    expect(error.codeName).toBe('INVALID_ARGUMENT');
    expect(error.details).toContain(
      'this ingest declares 5000 metadata columns for dataset ' +
        `${ks}, over the cap of 256 metadata columns per dataset (the maxMetadataColumns cap, ` +
        'set by SCYLLA_LOADER_MAX_METADATA_COLUMNS)',
    );
    expect(await metadataColumns(ks)).toEqual(before);

    // A dataset that does not exist yet is not made either.
    const fresh = newDataset();
    const refused = await failureOf(client.ingest(fresh, samples(2), { columns: wide }));
    expect(refused.codeName).toBe('INVALID_ARGUMENT');
    const keyspaces = await db.execute(
      'SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?',
      [fresh],
      { prepare: true },
    );
    expect(keyspaces.rowLength).toBe(0);
  });

  it('counts the columns a dataset has against the cap, and the sources it records', async () => {
    const capped = await startServer({ maxMetadataColumns: 6, maxSources: 2 });
    extraServers.push(capped);
    const c = newClient(capped.port);
    const ks = newDataset();
    await c.ingest(ks, samples(3), { labelNames: LABELS, columns: COLUMNS, source: 'one' });
    const plain = (prefix: string, metadata: IngestSampleInput['metadata']): IngestSampleInput[] =>
      [0, 1].map((i) => ({
        sourceKey: `${prefix}/${i}`,
        data: Buffer.from([i]),
        label: 0,
        metadata,
      }));
    // Five stored, two more asked for (the target alone is within the cap): one over six.
    const error = await failureOf(
      c.ingest(ks, plain('more', { extra1: 1, extra2: 'x' }), {
        labelNames: LABELS,
        columns: { extra1: 'int', extra2: 'text' },
        source: 'one',
      }),
    );
    expect(error.codeName).toBe('INVALID_ARGUMENT');
    expect(error.details).toMatch(
      new RegExp(
        `^dataset ${ks} has 5 metadata columns and this ingest would add 2, over the cap of 6 ` +
          'metadata columns per dataset \\(the maxMetadataColumns cap, set by ' +
          'SCYLLA_LOADER_MAX_METADATA_COLUMNS\\)',
      ),
    );
    expect(await metadataColumns(ks)).toEqual(Object.keys(COLUMNS).sort());
    // One new column is within it.
    await c.ingest(ks, plain('one-more', { extra1: 1 }), {
      labelNames: LABELS,
      columns: { extra1: 'int' },
      source: 'two',
    });
    expect(await metadataColumns(ks)).toContain('extra1');

    // Two sources recorded: a known one is fine, a third is refused.
    await c.ingest(ks, plain('again', {}), { labelNames: LABELS, columns: {}, source: 'one' });
    const third = await failureOf(
      c.ingest(ks, plain('third', {}), { labelNames: LABELS, columns: {}, source: 'three' }),
    );
    expect(third.codeName).toBe('INVALID_ARGUMENT');
    expect(third.details).toMatch(/the maxSources cap, set by SCYLLA_LOADER_MAX_SOURCES/);
  });

  it('recounts after a call that wrote samples, not after one that wrote nothing', async () => {
    const ks = newDataset();
    const recounts = async (): Promise<number> =>
      (await server.context.metrics.datasetRecounts.get()).values[0]?.value ?? 0;
    const sent = samples(20, 11);
    const start = await recounts();
    const first = await client.ingest(ks, sent, { labelNames: LABELS, columns: COLUMNS });
    expect(first.datasetSamples).toBe(20);
    expect(await recounts()).toBe(start + 1);

    const empty = await client.ingest(ks, [], { labelNames: LABELS, columns: COLUMNS });
    expect(empty).toMatchObject({ acknowledged: 0, written: 0, datasetSamples: 20 });
    const present = await client.ingest(ks, sent, { labelNames: LABELS, columns: COLUMNS });
    expect(present).toMatchObject({ written: 0, alreadyPresent: 20, datasetSamples: 20 });
    expect(await recounts()).toBe(start + 1);
  });

  it('calls of one dataset ending together share recounts', async () => {
    const ks = newDataset();
    await client.ingest(ks, samples(1, 20, 'seed'), { labelNames: LABELS, columns: COLUMNS });
    const recounts = async (): Promise<number> =>
      (await server.context.metrics.datasetRecounts.get()).values[0]?.value ?? 0;
    const start = await recounts();
    const calls = 6;
    const summaries = await Promise.all(
      Array.from({ length: calls }, (_, i) =>
        client.ingest(ks, samples(5, 30 + i, `p${i}`), { labelNames: LABELS, columns: COLUMNS }),
      ),
    );
    // Every call sees at least its own samples counted, and the last count is exact.
    for (const s of summaries) expect(s.datasetSamples).toBeGreaterThanOrEqual(6);
    expect(Math.max(...summaries.map((s) => s.datasetSamples))).toBe(1 + calls * 5);
    expect(await recounts()).toBeLessThanOrEqual(start + calls);
  });

  it('writes a null label or label blob over data rows a crashed ingest left', async () => {
    const ks = newDataset();
    await client.ingest(ks, samples(2), { labelNames: LABELS, columns: COLUMNS });
    // Data rows with no metadata row: what a crash between the two writes leaves.
    const ns = datasetNamespace(ks);
    const blobOnly = sampleId('orphan/blob-only.bin', ns);
    const labelOnly = sampleId('orphan/label-only.bin', ns);
    for (const id of [blobOnly, labelOnly]) {
      await db.execute(
        `INSERT INTO ${ks}.samples (id, label, label_blob, data) VALUES (?, ?, ?, ?)`,
        [id, 2, Buffer.from([9, 9]), Buffer.from([1])],
        { prepare: true },
      );
    }
    const summary = await client.ingest(
      ks,
      [
        { sourceKey: 'orphan/blob-only.bin', data: Buffer.from([7]), labelBlob: Buffer.from([5]) },
        { sourceKey: 'orphan/label-only.bin', data: Buffer.from([8]), label: 1 },
      ],
      { labelNames: LABELS, columns: COLUMNS },
    );
    expect(summary).toMatchObject({ written: 2, alreadyPresent: 0 });
    const stored = async (id: string): Promise<Record<string, unknown>> => {
      const row = (
        await db.execute(`SELECT label, label_blob, data FROM ${ks}.samples WHERE id = ?`, [id], {
          prepare: true,
        })
      ).first()!;
      const meta = (
        await db.execute(`SELECT label FROM ${ks}.metadata WHERE id = ?`, [id], { prepare: true })
      ).first()!;
      return {
        label: row['label'],
        labelBlob: (row['label_blob'] as Buffer | null)?.toString('hex') ?? null,
        data: (row['data'] as Buffer).toString('hex'),
        metadataLabel: meta['label'],
      };
    };
    expect(await stored(blobOnly)).toEqual({
      label: null,
      labelBlob: '05',
      data: '07',
      metadataLabel: null,
    });
    expect(await stored(labelOnly)).toEqual({
      label: 1,
      labelBlob: null,
      data: '08',
      metadataLabel: 1,
    });
  });

  it('writes at the write consistency setting: one the node cannot give is UNAVAILABLE naming it', async () => {
    const ks = newDataset();
    await client.ingest(ks, samples(3), { labelNames: LABELS, columns: COLUMNS });
    // The test node holds one replica (replication 1): TWO cannot be met, LOCAL_QUORUM can.
    const strict = await startServer({ db: { ...testDbConfig(), writeConsistency: 'TWO' } });
    extraServers.push(strict);
    const error = await failureOf(
      newClient(strict.port).ingest(ks, samples(3, 40, 'two'), {
        labelNames: LABELS,
        columns: COLUMNS,
      }),
    );
    expect(error.codeName).toBe('UNAVAILABLE');
    expect(error.details).toContain('not enough database replicas are alive for consistency TWO');
    expect(error.details).toContain('consistency TWO is set by SCYLLA_LOADER_WRITE_CONSISTENCY');
    expect(await countRows(ks)).toEqual({ samples: 3, metadata: 3 });

    // Metadata reads use theirs: a describe at TWO fails the same way.
    const reads = await startServer({ db: { ...testDbConfig(), readConsistency: 'TWO' } });
    extraServers.push(reads);
    const described = await failureOf(newClient(reads.port).describeDataset(ks));
    expect(described.codeName).toBe('UNAVAILABLE');
    expect(described.details).toContain('consistency TWO');
  });
});
