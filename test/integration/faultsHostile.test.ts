import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type cassandra from 'cassandra-driver';
import { service as healthService } from 'grpc-health-check';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  ClientError,
  LoaderClient,
  type StreamBatchesOptions,
  type TransformOptions,
} from '../../src/client/index.js';
import { toProtoRequest } from '../../src/testing/index.js';
import { createDbClient, ingestDataset, readManifest } from '../../src/core/index.js';
import { loaderCodec } from '../faults/fuzz/loaderCodec.js';
import { hashToken } from '../../src/testing/index.js';
import { newToken } from '../../src/testing/index.js';
import { LOADER_REQUEST_LIMITS } from '../../src/server/index.js';
import { collect, spawnCli } from '../support/runCli.js';
import { scrape, startServeCli, type ServedLoader } from '../support/serveCli.js';
import { ingestSmallDataset } from '../support/smallDataset.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

/**
 * What an untrusted client can do to a loader: each case sends what a hostile or broken client
 * would, against a spawned `serve` with a tokens file, and asserts the status it gets, a bound
 * on the loader's memory growth read from /proc, and that a normal stream beside it goes on.
 */

const MIB = 1024 * 1024;
const N = 240;
let db: cassandra.Client;
let mnist: string;
let fmnist: string;
/** 128 samples of 1 MiB: a window of positions alone would hold all of them. */
let large: string;
/** Three small JPEGs and one of 65,500 x 1,360 (89 M pixels, just under the pixel limit). */
let long: string;
/** 64 MNIST-sized (28 x 28) PNGs. */
let tiny: string;
const WINDOW_BYTES = 8 * 1024 * 1024;
/** Connections one address may hold (the default is 256). */
const PEER_CONNECTIONS = 40;
let loader: ServedLoader;
const reader = newToken();
const narrow = newToken();
const admin = newToken();
const writer = newToken();

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  mnist = uniqueKeyspace();
  fmnist = uniqueKeyspace();
  await ingestSmallDataset(db, mnist, N, 4, 1000);
  await ingestSmallDataset(db, fmnist, N, 4, 1000);
  large = uniqueKeyspace();
  await ingestSmallDataset(db, large, 128, 4, 1024 * 1024);
  long = uniqueKeyspace();
  await ingestImages(long, [
    [200, 150],
    [160, 220],
    [240, 180],
    [65_500, 1_360],
  ]);
  tiny = uniqueKeyspace();
  await ingestImages(
    tiny,
    Array.from({ length: 64 }, () => [28, 28] as const),
    'png',
  );
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sl-hostile-'));
  const tokensFile = path.join(dir, 'tokens.json');
  const entry = (name: string, token: string, role: string, datasets: string[]) => ({
    name,
    sha256: hashToken(token).toString('hex'),
    role,
    datasets,
  });
  writeFileSync(
    tokensFile,
    JSON.stringify({
      tokens: [
        entry('trainer', reader, 'reader', [mnist, fmnist, large, long, tiny]),
        entry('narrow', narrow, 'reader', [mnist]),
        entry('pipeline', writer, 'writer', ['*']),
        entry('ops', admin, 'admin', ['*']),
      ],
    }),
  );
  // Listening on 0.0.0.0 is allowed: the tokens file is set.
  loader = await startServeCli(
    1,
    [
      '--host',
      '0.0.0.0',
      '--max-streams',
      '8',
      '--max-streams-per-client',
      '3',
      '--max-window-bytes',
      String(WINDOW_BYTES),
      '--max-connections-per-peer',
      String(PEER_CONNECTIONS),
      // One transform at a time: a core stays free, so health timings show the event loop,
      // not two cores shared by transforms, the database and this process.
      '--transform-concurrency',
      '1',
      // The memory bounds checked here are the streams' (windows, batches, requests); the
      // sample cache `serve` sizes by default has its own bound and would hold the dataset.
      '--cache-memory-bytes',
      '0',
    ],
    { SCYLLA_LOADER_AUTH_TOKENS_FILE: tokensFile },
  );
}, 180_000);

afterAll(async () => {
  loader?.child.kill('SIGTERM');
  await loader?.done;
  for (const ks of [mnist, fmnist, large, long, tiny]) if (ks) await dropKeyspace(db, ks);
  await db?.shutdown();
});

/** Ingests one image of each size (a pattern, so the encoder cannot make it trivial). */
async function ingestImages(
  dataset: string,
  sizes: readonly (readonly [number, number])[],
  format: 'jpeg' | 'png' = 'jpeg',
): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-hostile-img-'));
  await mkdir(path.join(dir, 'files'));
  const lines = ['path,label'];
  for (const [i, [width, height]] of sizes.entries()) {
    const image = sharp({
      create: { width, height, channels: 3, background: { r: (i * 37) % 256, g: 90, b: 160 } },
    });
    const data = await (format === 'png' ? image.png() : image.jpeg()).toBuffer();
    await writeFile(path.join(dir, `files/${i}.${format}`), data);
    lines.push(`files/${i}.${format},${i % 4}`);
  }
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(db, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv')),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 4,
    strict: false,
  });
}

const SERVICE = '/scylla_loader.v1.LoaderService';
const identity = (b: Buffer): Buffer => b;

function rawClient(): grpc.Client {
  return new grpc.Client(`127.0.0.1:${loader.port}`, grpc.credentials.createInsecure(), {
    'grpc.max_send_message_length': -1,
    'grpc.max_receive_message_length': -1,
    'grpc.use_local_subchannel_pool': 1,
  });
}

function auth(token?: string): grpc.Metadata {
  const m = new grpc.Metadata();
  if (token !== undefined) m.set('authorization', `Bearer ${token}`);
  return m;
}

/** Sends a raw body to a method and resolves with the status name and details it ended with. */
function rawCall(
  method: string,
  body: Buffer,
  token?: string,
  client = rawClient(),
): Promise<{ code: string; details: string }> {
  const deadline = Date.now() + 60_000;
  const path = `${SERVICE}/${method}`;
  return new Promise((resolve) => {
    const done = (code: number, details: string): void => {
      client.close();
      resolve({ code: grpc.status[code] ?? String(code), details });
    };
    if (method === 'StreamBatches') {
      const call = client.makeServerStreamRequest(path, identity, identity, body, auth(token), {
        deadline,
      });
      call.on('data', () => call.cancel());
      call.on('error', (e: grpc.ServiceError) => done(e.code, e.details));
      call.on('status', (s: grpc.StatusObject) => s.code === 0 && done(0, s.details));
    } else if (method === 'IngestSamples') {
      const call = client.makeBidiStreamRequest(path, identity, identity, auth(token), {
        deadline,
      });
      call.on('data', () => undefined);
      call.on('error', (e: grpc.ServiceError) => done(e.code, e.details));
      call.on('status', (s: grpc.StatusObject) => s.code === 0 && done(0, s.details));
      call.write(body);
      call.end();
    } else {
      client.makeUnaryRequest(path, identity, identity, body, auth(token), { deadline }, (err) =>
        err ? done(err.code, err.details) : done(0, 'OK'),
      );
    }
  });
}

/** Transforms the loader ran on its event loop and on the thread pool, from its /metrics. */
function transformsByThread(text: string): { loop: number; pool: number } {
  const count = (thread: string): number =>
    [
      ...text.matchAll(
        new RegExp(
          `^scylla_loader_transform_duration_seconds_count\\{[^}]*thread="${thread}"[^}]*\\} (\\d+)$`,
          'gm',
        ),
      ),
    ].reduce((sum, m) => sum + Number(m[1]), 0);
  return { loop: count('loop'), pool: count('pool') };
}

/** Resident and peak-resident memory of the loader, bytes (VmRSS, VmHWM). */
function memory(): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${loader.child.pid}/status`, 'utf8');
  const kib = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/**
 * Runs `work` and returns how far the loader's resident memory rose above where it stood at
 * the start: the peak (VmHWM, reset first through clear_refs) minus the resident size before.
 */
async function growthDuring(name: string, work: () => Promise<unknown>): Promise<number> {
  // Writing 5 resets the peak to the current resident size (Linux 4.0 on).
  writeFileSync(`/proc/${loader.child.pid}/clear_refs`, '5');
  const before = memory().rss;
  await work();
  const { peak } = memory();
  // One line per case, for the figures of docs/security.md and the issue notes.
  console.log(
    `[hostile] ${name}: RSS ${(before / MIB).toFixed(0)} MiB before, peak +${((peak - before) / MIB).toFixed(1)} MiB`,
  );
  return peak - before;
}

function sdk(token: string): LoaderClient {
  return new LoaderClient(`127.0.0.1:${loader.port}`, {
    token,
    reconnect: { attempts: 0, retryOnResourceExhausted: false },
  });
}

/** Streams `epochs` whole epochs of `dataset` with `token`, returning the samples delivered. */
async function normalStream(token: string, epochs = 3): Promise<number> {
  const c = sdk(token);
  let samples = 0;
  try {
    for await (const b of c.streamBatches({
      dataset: mnist,
      split: 'all',
      batchSize: 16,
      seed: 7,
      epochs,
    })) {
      samples += b.ids.length;
    }
  } finally {
    c.close();
  }
  return samples;
}

/** An empty `sources` entry (field 18, length 0) repeated to `bytes`: 3 bytes, one object each. */
function emptySources(bytes: number): Buffer {
  const body = Buffer.alloc(bytes - (bytes % 3));
  for (let i = 0; i < body.length; i += 3) body.set([0x92, 0x01, 0x00], i);
  return body;
}

describe('a hostile client against serve with tokens', () => {
  it('refuses three 32 MiB bodies without a token unread: UNAUTHENTICATED, under 64 MiB, a stream beside goes on', async () => {
    const body = emptySources(32 * MIB);
    let results: { code: string; details: string }[] = [];
    let streamed = 0;
    const growth = await growthDuring(
      'three unauthenticated 32 MiB StreamBatches bodies',
      async () => {
        [results, streamed] = await Promise.all([
          Promise.all([0, 1, 2].map(() => rawCall('StreamBatches', body))),
          normalStream(reader),
        ]);
      },
    );
    expect(results.map((r) => r.code)).toEqual([
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
      'UNAUTHENTICATED',
    ]);
    expect(streamed).toBe(3 * N);
    expect(growth).toBeLessThan(64 * MIB);
  });

  it('gives each method its own size limit: one byte over it is RESOURCE_EXHAUSTED, unbuffered', async () => {
    const seen: Record<string, string> = {};
    const growth = await growthDuring('one byte over each method limit', async () => {
      for (const [method, limit] of Object.entries(LOADER_REQUEST_LIMITS)) {
        const r = await rawCall(method, Buffer.alloc(limit.bytes + 1), admin);
        seen[method] = `${r.code}: ${r.details}`;
      }
    });
    for (const [method, limit] of Object.entries(LOADER_REQUEST_LIMITS)) {
      expect(seen[method], method).toMatch(
        new RegExp(`^RESOURCE_EXHAUSTED: .*${limit.bytes + 1} vs ${limit.bytes}`),
      );
    }
    // A refused body is never buffered whole: the largest (32 MiB) would show.
    expect(growth).toBeLessThan(64 * MIB);
    // A request within its limit still works, from the same token.
    expect(await normalStream(admin, 1)).toBe(N);
  });

  it('refuses a reader body of empty sub-messages before decoding it (RESOURCE_EXHAUSTED), under 96 MiB', async () => {
    // 15 MiB is within StreamBatches' 16 MiB, but decodes into 5 million objects (~1 GB).
    let result = { code: '', details: '' };
    const growth = await growthDuring('15 MiB of empty sources from a reader', async () => {
      result = await rawCall('StreamBatches', emptySources(15 * MIB), reader);
    });
    expect(result.code).toBe('RESOURCE_EXHAUSTED');
    expect(result.details).toMatch(/more than 1200000 fields and messages/);
    expect(growth).toBeLessThan(96 * MIB);
  });

  it('lets one token hold only its share of the stream slots, while another token streams', async () => {
    const held: AsyncIterator<unknown>[] = [];
    const clients: LoaderClient[] = [];
    const job: StreamBatchesOptions = {
      dataset: mnist,
      split: 'all',
      batchSize: 1,
      seed: 1,
      epochs: 100_000,
    };
    try {
      for (let i = 0; i < 3; i++) {
        const c = sdk(narrow);
        clients.push(c);
        const it = c.streamBatches(job)[Symbol.asyncIterator]();
        await it.next(); // open, then never read again
        held.push(it);
      }
      const c = sdk(narrow);
      clients.push(c);
      const fourthStream = c.streamBatches(job)[Symbol.asyncIterator]();
      const fourth = await fourthStream.next().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(fourth).toBeInstanceOf(ClientError);
      expect((fourth as ClientError).code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect((fourth as ClientError).details).toMatch(/already holds 3 open streams/);
      // The loader's 8 slots are not all taken: another token still streams.
      expect(await normalStream(reader, 1)).toBe(N);
    } finally {
      await Promise.all(held.map((it) => it.return?.()));
      for (const c of clients) c.close();
    }
  });

  it('holds a never-reading stream of 1 MiB samples to its window bytes, while another streams', async () => {
    const c = sdk(reader);
    const stream = c.streamBatches({
      dataset: large,
      split: 'all',
      batchSize: 4,
      prefetch: 64,
      seed: 2,
      epochs: 100,
    });
    const it = stream[Symbol.asyncIterator]();
    try {
      let streamed = 0;
      const growth = await growthDuring('never-reading stream of 1 MiB samples', async () => {
        await it.next(); // one batch, then never another
        streamed = await normalStream(reader, 1);
        // Let the loader fill what it may: its window, the batch it always completes, and what
        // waits to be sent.
        let last = 0;
        for (let still = 0; still < 5;) {
          await sleep(200);
          const now = memory().rss;
          still = Math.abs(now - last) < MIB ? still + 1 : 0;
          last = now;
        }
      });
      expect(streamed).toBe(N);
      // A window of 256 positions would hold the whole 128 MiB dataset.
      expect(growth).toBeLessThan(WINDOW_BYTES + 56 * MIB);
    } finally {
      await it.return?.();
      c.close();
    }
  });

  it('refuses a resize whose intermediate would pass the pixel limit before allocating it (pixel_limit), the rest streams', async () => {
    const c = sdk(reader);
    const transform: TransformOptions = {
      channels: 3,
      // The long image resized so: 73,976 x 1,536 (114 M pixels, 341 MB). The others: 2,048 x
      // 1,536 at most (9 MB each).
      resize: 1536,
      randomResizedCrop: { height: 224, width: 224 },
      output: 'raw',
      badImagePolicy: 'skip',
    };
    let ids: string[] = [];
    let skipped = 0;
    try {
      // Once before measuring: the process's first transforms load the decoders and start the
      // thread pool, a one-time cost that is not this request's.
      for await (const b of c.streamBatches({
        dataset: long,
        split: 'all',
        batchSize: 4,
        seed: 1,
        transform,
      })) {
        expect(b.ids).toHaveLength(3);
      }
      const growth = await growthDuring('65,500 x 1,360 JPEG resized to 1,536', async () => {
        for await (const b of c.streamBatches({
          dataset: long,
          split: 'all',
          batchSize: 4,
          seed: 2,
          transform,
        })) {
          ids = ids.concat(b.ids);
          skipped += b.skippedUndecodable;
        }
      });
      expect(growth).toBeLessThan(64 * MIB);
    } finally {
      c.close();
    }
    expect([ids.length, skipped]).toEqual([3, 1]);
  });

  it('runs an upscaled output of MNIST-sized images off the event loop: health answers in time meanwhile', async () => {
    const Health = grpc.makeGenericClientConstructor(healthService, 'Health');
    const health = new Health(`127.0.0.1:${loader.port}`, grpc.credentials.createInsecure());
    const check = (): Promise<number> => {
      const t0 = performance.now();
      return new Promise((resolve, reject) =>
        (health as unknown as { Check: (r: object, cb: (e: unknown) => void) => void }).Check(
          { service: '' },
          (e) => (e ? reject(e as Error) : resolve(performance.now() - t0)),
        ),
      );
    };
    await check(); // connected
    const before = transformsByThread(await scrape(loader));
    // The batches are taken raw (not decoded): this process must stay free to time the checks.
    const body = loaderCodec().encode(
      'StreamBatches',
      toProtoRequest({
        dataset: tiny,
        split: 'all',
        batchSize: 8,
        seed: 1,
        epochs: 8,
        // 28 x 28 up to 512 x 512: 334 times the source's pixels, over the inline bound.
        transform: { channels: 3, resize: 512, centerCrop: { height: 512, width: 512 } },
      }),
    );
    const raw = rawClient();
    const latencies: number[] = [];
    let batches = 0;
    try {
      const streamed = new Promise<void>((resolve, reject) => {
        const call = raw.makeServerStreamRequest(
          `${SERVICE}/StreamBatches`,
          identity,
          identity,
          body,
          auth(reader),
        );
        call.on('data', () => batches++);
        call.on('error', reject);
        call.on('end', resolve);
      });
      let streaming = true;
      const probing = (async () => {
        while (streaming) {
          latencies.push(await check());
          await sleep(10);
        }
      })();
      await streamed.finally(() => (streaming = false));
      await probing;
    } finally {
      raw.close();
      health.close();
    }
    const samples = batches * 8;
    expect(samples).toBe(8 * 64);
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.floor(latencies.length * 0.99)]!;
    console.log(
      `[hostile] health checks during an upscaled MNIST stream: ${latencies.length}, p50 ${latencies[Math.floor(latencies.length / 2)]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`,
    );
    // Where each transform ran is counted by the loader: every one of these went to the thread
    // pool (an upscale is the work of its output, not of its 28 x 28 source).
    const after = transformsByThread(await scrape(loader));
    expect(after.pool - before.pool).toBe(8 * 64);
    expect(after.loop - before.loop).toBe(0);
    // Health kept answering while they ran. The bound is loose (the machine is shared): it fails
    // only when the loop is held for whole batches at a time.
    expect(latencies.length).toBeGreaterThan(10);
    expect(p99).toBeLessThan(250);
  });

  it('bounds calls per connection and connections per address at the HTTP/2 level', async () => {
    const opened = await Promise.all(
      Array.from(
        { length: PEER_CONNECTIONS + 10 },
        () =>
          new Promise<{ session: http2.ClientHttp2Session; settings?: http2.Settings }>(
            (resolve) => {
              const session = http2.connect(`http://127.0.0.1:${loader.port}`);
              session.on('error', () => undefined);
              session.once('remoteSettings', (settings) => resolve({ session, settings }));
              session.once('close', () => resolve({ session }));
            },
          ),
      ),
    );
    await sleep(500);
    const alive = opened.filter((o) => !o.session.closed && !o.session.destroyed);
    try {
      // The loader advertises its limit of concurrent calls on every connection it keeps.
      expect(opened.find((o) => o.settings)?.settings?.maxConcurrentStreams).toBe(128);
      expect(alive.length).toBeLessThanOrEqual(PEER_CONNECTIONS);
      expect(alive.length).toBeGreaterThan(PEER_CONNECTIONS - 10);
    } finally {
      for (const o of opened) o.session.destroy();
    }
    // Their slots are given back: a client streams again.
    await sleep(200);
    expect(await normalStream(reader, 1)).toBe(N);
  });

  it('authorizes a mixture source by source: granted datasets mix, an ungranted one is named', async () => {
    const mix = (token: string): Promise<number | ClientError> => {
      const c = sdk(token);
      return (async () => {
        let n = 0;
        for await (const b of c.streamBatches({
          sources: [
            { dataset: mnist, split: 'all' },
            { dataset: fmnist, split: 'all' },
          ],
          batchSize: 32,
          seed: 3,
          epochs: 1,
        })) {
          n += b.ids.length;
        }
        return n;
      })()
        .catch((e: unknown) => e as ClientError)
        .finally(() => c.close());
    };
    const granted = await mix(reader);
    expect(granted).toBeGreaterThanOrEqual(N);
    const denied = await mix(narrow);
    expect(denied).toBeInstanceOf(ClientError);
    expect((denied as ClientError).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((denied as ClientError).details).toContain(JSON.stringify(fmnist));
  });

  it('caps a long dataset name in the denial and the log', async () => {
    // Within DescribeDataset's 64 KiB; a name past it is refused by size before any grant.
    const name = 'x'.repeat(60_000);
    const c = sdk(narrow);
    try {
      const err = await c.describeDataset(name, { deadline: Date.now() + 30_000 }).then(
        () => undefined,
        (e: unknown) => e as ClientError,
      );
      expect(err?.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(err!.details.length).toBeLessThan(1100);
      expect(err!.details).toMatch(/more characters/);
    } finally {
      c.close();
    }
    // The log line comes through the loader's stdout pipe, which may trail the answer.
    const denied = await vi.waitFor(
      () => {
        const found = loader.lines.filter((l) => l['msg'] === 'call denied');
        expect(found.length).toBeGreaterThan(0);
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(JSON.stringify(denied.at(-1)).length).toBeLessThan(2000);
  });

  it('answers an undecodable first IngestSamples message with INVALID_ARGUMENT', async () => {
    const r = await rawCall('IngestSamples', Buffer.from([0xff, 0xff, 0xff]), writer);
    expect(r.code).toBe('INVALID_ARGUMENT');
    expect(r.details).toMatch(/not a scylla_loader\.v1\.LoaderService\.IngestSamples request/);
  });
});

describe('serve without authorization', () => {
  it('refuses to listen on a non-loopback address unless told, naming both ways out', async () => {
    const db = testDbConfig();
    const env = {
      SCYLLA_LOADER_CONTACT_POINTS: db.contactPoints.join(','),
      SCYLLA_LOADER_CQL_PORT: String(db.port),
      SCYLLA_LOADER_AUTH_TOKENS_FILE: '',
    };
    const refused = await collect(
      spawnCli(['serve', '--host', '0.0.0.0', '--grpc-port', '0', '--metrics-port', '0'], env),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/--auth-tokens/);
    expect(refused.stderr).toMatch(/--allow-unauthenticated/);
  });
});
