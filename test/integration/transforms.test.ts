import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import sharp from 'sharp';
import { parse as uuidParse } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientError } from '../../src/client/index.js';
import type { DecodedBatch } from '../../src/client/index.js';
import { LoaderClient } from '../../src/client/index.js';
import type { StreamBatchesOptions } from '../../src/client/index.js';
import type { TransformOptions } from '../../src/client/index.js';
import {
  createDbClient,
  datasetNamespace,
  ingestDataset,
  readManifest,
  SampleRandom,
  sampleId,
} from '../../src/core/index.js';
import { randomResizedRegion } from '../../src/testing/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { dbEnv } from '../support/dbEnv.js';
import { type ImageFixture, ingestImageDataset, patternPixels } from '../support/imageDataset.js';
import { metric, SERVE_ON_FREE_PORTS } from '../support/serveCli.js';
import { collect, spawnCli } from '../support/runCli.js';
import { newReadyFile, waitForReadyFile } from '../support/readyFile.js';
import { startTestServer } from '../support/loaderServer.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';

const GOOD = 40;
const resumeKey = randomBytes(32).toString('hex');
let db: cassandra.Client;
let ks: string;
/** A second image dataset, all good, for a mixed stream. */
let ks2: string;
let byId2: Set<string>;
/** Three small JPEGs and a long one (6,000 x 100): see {@link ingestLongImageDataset}. */
let ksLong: string;
let longId: string;
let files: Map<string, ImageFixture>;
/** Fixture by sample id (UUID string). */
let byId: Map<string, ImageFixture>;
let server: LoaderServer;
let client: LoaderClient;

const RRC: TransformOptions = {
  channels: 3,
  randomResizedCrop: { height: 48, width: 40 },
  horizontalFlip: 0.5,
  badImagePolicy: 'skip',
};

async function stream(
  req: Partial<StreamBatchesOptions>,
  c: LoaderClient = client,
): Promise<DecodedBatch[]> {
  const out: DecodedBatch[] = [];
  for await (const b of c.streamBatches({ dataset: ks, split: 'all', batchSize: 8, ...req })) {
    out.push(b);
  }
  return out;
}

/** Each sample's pixels (a copy) by id. */
function pixelsById(batches: DecodedBatch[]): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const b of batches) {
    b.ids.forEach((id, i) => out.set(id, Buffer.from(b.samples[i]!)));
  }
  return out;
}

async function errorOf(req: Partial<StreamBatchesOptions>): Promise<ClientError> {
  try {
    await stream(req);
  } catch (err) {
    expect(err).toBeInstanceOf(ClientError);
    return err as ClientError;
  }
  throw new Error('the stream did not fail');
}

async function metricsText(): Promise<string> {
  return (await fetch(`http://127.0.0.1:${server.metricsPort}/metrics`)).text();
}

/** The oriented image as sharp decodes it, converted to `channels`, raw. */
async function orientedRaw(
  data: Buffer,
  channels: 1 | 3,
): Promise<{ data: Buffer; width: number; height: number }> {
  const img = sharp(data).autoOrient().removeAlpha();
  const { data: px, info } = await (
    channels === 3 ? img.toColourspace('srgb') : img.toColourspace('b-w')
  )
    .raw()
    .toBuffer({ resolveWithObject: true });
  expect(info.channels).toBe(channels);
  return { data: px, width: info.width, height: info.height };
}

/** Rows [top, top+h) and columns [left, left+w) of an HWC image, mirrored when `flip`. */
function cropRaw(
  px: Buffer,
  width: number,
  channels: number,
  region: { left: number; top: number; width: number; height: number },
  flip = false,
): Buffer {
  const out = Buffer.alloc(region.width * region.height * channels);
  for (let y = 0; y < region.height; y++) {
    for (let x = 0; x < region.width; x++) {
      const sx = region.left + (flip ? region.width - 1 - x : x);
      const src = ((region.top + y) * width + sx) * channels;
      px.copy(out, (y * region.width + x) * channels, src, src + channels);
    }
  }
  return out;
}

/** Python's round (half to even), which torchvision's crop offsets use. */
function pyRound(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * torchvision's CenterCrop of an HWC image, written out: zero padding where the crop is larger
 * (left/top get the floor of half), then the middle, then an optional mirror.
 */
function centerCropReference(
  px: Buffer,
  width: number,
  height: number,
  channels: number,
  cropHeight: number,
  cropWidth: number,
  flip: boolean,
): Buffer {
  const padLeft = cropWidth > width ? Math.floor((cropWidth - width) / 2) : 0;
  const padTop = cropHeight > height ? Math.floor((cropHeight - height) / 2) : 0;
  const pw = Math.max(width, cropWidth);
  const ph = Math.max(height, cropHeight);
  const padded = Buffer.alloc(pw * ph * channels);
  for (let y = 0; y < height; y++) {
    px.copy(
      padded,
      ((y + padTop) * pw + padLeft) * channels,
      y * width * channels,
      (y + 1) * width * channels,
    );
  }
  const region = {
    left: pyRound((pw - cropWidth) / 2),
    top: pyRound((ph - cropHeight) / 2),
    width: cropWidth,
    height: cropHeight,
  };
  return cropRaw(padded, pw, channels, region, flip);
}

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  files = await ingestImageDataset(db, ks, GOOD, true);
  const ns = datasetNamespace(ks);
  byId = new Map([...files.values()].map((f) => [sampleId(f.key, ns), f]));
  ks2 = uniqueKeyspace();
  const files2 = await ingestImageDataset(db, ks2, 10, false);
  byId2 = new Set([...files2.values()].map((f) => sampleId(f.key, datasetNamespace(ks2))));
  ksLong = uniqueKeyspace();
  longId = await ingestLongImageDataset(ksLong);
}, 120_000);

/**
 * Ingests three small JPEGs and one of 6,000 x 100 (0.6 M pixels, under the loaders' 4 M
 * limit); returns the long one's sample id. Resized to a shorter side of 512, the long one
 * would be 30,720 x 512 (15.7 M pixels): the shape of a panorama in a photo dataset.
 */
async function ingestLongImageDataset(dataset: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-long-'));
  await mkdir(path.join(dir, 'files'));
  const sizes = [
    [200, 150],
    [160, 220],
    [240, 180],
    [6000, 100],
  ] as const;
  const lines = ['path,label'];
  for (const [i, [width, height]] of sizes.entries()) {
    const data = await sharp(patternPixels(width, height, i + 1), {
      raw: { width, height, channels: 3 },
    })
      .jpeg()
      .toBuffer();
    await writeFile(path.join(dir, `files/${i}.jpg`), data);
    lines.push(`files/${i}.jpg,${i}`);
  }
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(db, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv')),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 4,
    strict: false,
  });
  return sampleId('files/3.jpg', datasetNamespace(dataset));
}

afterAll(async () => {
  await dropKeyspace(db, ksLong);
  await dropKeyspace(db, ks2);
  await dropKeyspace(db, ks);
  await db.shutdown();
});

/** A loader over the test's dataset, decoding with the native module (`auto`) or sharp alone. */
function useLoader(mode: 'auto' | 'off'): void {
  beforeAll(async () => {
    server = await startTestServer({
      resumeKey,
      maxImagePixels: 4_000_000,
      transformConcurrency: 2,
      nativeTransforms: mode,
    });
    client = new LoaderClient(`127.0.0.1:${server.port}`, { reconnect: { attempts: 0 } });
  });
  afterAll(async () => {
    client?.close();
    await server?.shutdown();
  });
}

/**
 * Every behaviour on both decoding paths: the native module (JPEG and 8-bit PNG; the WebP
 * sample falls back to sharp) and sharp alone, the fallback of a checkout without the module.
 */
describe.each([
  ['native', 'auto'],
  ['sharp', 'off'],
] as const)('server-side transforms (%s)', (decoder, mode) => {
  useLoader(mode);

  it('one transform for every source of a mixed stream: bad images of one source skipped, pixels of both', async () => {
    // Weights in proportion to the sizes (43 and 10): the epoch takes every sample once.
    const batches = await stream({
      dataset: undefined,
      split: undefined,
      sources: [
        { dataset: ks, split: 'all', weight: 43 },
        { dataset: ks2, split: 'all', weight: 10 },
      ],
      seed: 3,
      transform: RRC,
    });
    const got = batches.flatMap((b) => b.ids.map((id, i) => ({ id, source: b.sourceIndexes![i] })));
    const good = [...byId].filter(([, f]) => f.kind === 'good').map(([id]) => id);
    expect(
      got
        .filter((g) => g.source === 0)
        .map((g) => g.id)
        .sort(),
    ).toEqual(good.sort());
    expect(
      got
        .filter((g) => g.source === 1)
        .map((g) => g.id)
        .sort(),
    ).toEqual([...byId2].sort());
    expect(batches.reduce((a, b) => a + b.skippedUndecodable, 0)).toBe(3);
    for (const b of batches) expect(b.tensor?.shape).toEqual([b.ids.length, 48, 40, 3]);
  });

  it('augments a repeated source anew in each pass, and identically when the stream is repeated', async () => {
    // The 10-sample source fills 30 positions: 3 passes in one epoch.
    const req = {
      dataset: undefined,
      split: undefined,
      sources: [
        { dataset: ks, split: 'all', weight: 1 },
        { dataset: ks2, split: 'all', weight: 1, repeat: true },
      ],
      samplesPerEpoch: 60,
      seed: 5,
      ordering: 'in-order' as const,
      transform: { ...RRC, badImagePolicy: 'skip' as const },
    };
    const pixels = (batches: DecodedBatch[]): { id: string; px: Buffer }[] =>
      batches.flatMap((b) =>
        b.ids
          .map((id, i) => ({ id, px: Buffer.from(b.samples[i]!), source: b.sourceIndexes![i] }))
          .filter((x) => x.source === 1),
      );
    const first = pixels(await stream(req));
    expect(first).toHaveLength(30);
    for (const id of byId2) {
      const crops = first.filter((x) => x.id === id).map((x) => x.px.toString('hex'));
      expect(crops).toHaveLength(3);
      expect(new Set(crops).size).toBeGreaterThan(1);
    }
    expect(pixels(await stream(req))).toEqual(first);
  });

  it('raw random-resized crops: one N x H x W x C uint8 tensor per batch, every good sample once, bad ones skipped and counted', async () => {
    const batches = await stream({ seed: 3, transform: RRC });
    const ids = batches.flatMap((b) => b.ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(
      [...byId]
        .filter(([, f]) => f.kind === 'good')
        .map(([id]) => id)
        .sort(),
    );
    expect(batches.reduce((a, b) => a + b.skippedUndecodable, 0)).toBe(3);
    expect(batches.reduce((a, b) => a + b.skippedMissing, 0)).toBe(0);
    for (const b of batches) {
      expect(b.tensor).toBeDefined();
      const t = b.tensor!;
      expect(t.dtype).toBe('uint8');
      expect(t.shape).toEqual([b.ids.length, 48, 40, 3]);
      expect(t.data.length).toBe(b.ids.length * 48 * 40 * 3);
      // A view of the received message, not a copy.
      expect(t.data.buffer).toBe(b.data.buffer);
    }
    const text = await metricsText();
    expect(text).toMatch(/scylla_loader_transform_failures_total\{reason="corrupt"\} [1-9]/);
    expect(text).toMatch(/scylla_loader_transform_failures_total\{reason="pixel_limit"\} [1-9]/);
    expect(text).toMatch(/scylla_loader_transform_failures_total\{reason="truncated"\} [1-9]/);
    expect(text).toMatch(/scylla_loader_transform_pixels_total [1-9]/);
    // Which decoder served: on the native path, the module for JPEG and PNG and sharp for the
    // WebP sample; on the sharp path, sharp for every sample.
    const count = (d: string): number =>
      [
        ...text.matchAll(
          new RegExp(
            `scylla_loader_transform_duration_seconds_count\\{output="raw",decoder="${d}",thread="[a-z]+"\\} (\\d+)`,
            'g',
          ),
        ),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
    expect(count('none')).toBeGreaterThanOrEqual(3);
    if (decoder === 'native') {
      expect(count('native')).toBeGreaterThan(0);
      expect(count('sharp')).toBeGreaterThan(0);
    } else {
      expect(count('native')).toBe(0);
      expect(count('sharp')).toBeGreaterThanOrEqual(GOOD);
    }
  });

  it('the same (seed, epoch, id) gives identical pixels across two streams and across a resume mid-epoch; another epoch differs', async () => {
    const first = pixelsById(await stream({ seed: 11, transform: RRC }));
    const second = pixelsById(await stream({ seed: 11, transform: RRC, ordering: 'in-order' }));
    expect(second).toEqual(first);

    // Break the stream after two batches, then resume with the last token.
    const resumed = new Map<string, Buffer>();
    let token: Buffer | undefined;
    let n = 0;
    for await (const b of client.streamBatches({
      dataset: ks,
      split: 'all',
      batchSize: 8,
      seed: 11,
      transform: RRC,
    })) {
      for (const [id, px] of pixelsById([b])) resumed.set(id, px);
      token = b.resumeToken;
      if (++n === 2) break;
    }
    for (const [id, px] of pixelsById(
      await stream({ seed: 11, transform: RRC, resumeToken: token! }),
    )) {
      expect(resumed.has(id)).toBe(false);
      resumed.set(id, px);
    }
    expect(resumed).toEqual(first);

    const nextEpoch = pixelsById(await stream({ seed: 11, firstEpoch: 1, transform: RRC }));
    const differing = [...first].filter(([id, px]) => !px.equals(nextEpoch.get(id)!)).length;
    expect(differing).toBeGreaterThan(GOOD / 2);
  });

  it('a resume token of a stream without the transform, or with another one, is refused', async () => {
    const [b] = await stream({ seed: 5, transform: RRC });
    const err = await errorOf({ seed: 5, resumeToken: b!.resumeToken });
    expect(err.codeName).toBe('INVALID_ARGUMENT');
  });

  it('a second loader process, with a sample cache, gives byte-identical pixels, cold and warm', async () => {
    const db = testDbConfig();
    const readyFile = newReadyFile();
    const loader = spawnCli([...SERVE_ON_FREE_PORTS], {
      SCYLLA_LOADER_READY_FILE: readyFile,
      ...dbEnv(db),
      SCYLLA_LOADER_RESUME_KEY: resumeKey,
      SCYLLA_LOADER_LOG_LEVEL: 'warn',
      SCYLLA_LOADER_MAX_IMAGE_PIXELS: '4000000',
      SCYLLA_LOADER_NATIVE_TRANSFORMS: mode,
      // The cache keeps what the database returned; the transform runs on every delivery.
      // The disk tier is the one the loader's workers share (the two streams below may go to
      // different workers, each with a memory tier of its own).
      SCYLLA_LOADER_CACHE_MEMORY_BYTES: String(64 << 20),
      SCYLLA_LOADER_CACHE_DIR: mkdtempSync(path.join(os.tmpdir(), 'sl-transform-cache-')),
    });
    const done = collect(loader);
    // Waited for by its ready file: a cold, loaded machine took over 15 s to start it, longer
    // than a client's reconnects to a port nobody listened on yet.
    const { port, metricsPort } = await waitForReadyFile(loader, readyFile);
    const other = new LoaderClient(`127.0.0.1:${port}`);
    try {
      const there = pixelsById(await stream({ seed: 21, transform: RRC }, other));
      const here = pixelsById(await stream({ seed: 21, transform: RRC }));
      expect(there.size).toBe(GOOD);
      expect(there).toEqual(here);
      // Every sample from the cache now (the bad ones too, skipped again by the policy).
      const warm = pixelsById(await stream({ seed: 21, transform: RRC }, other));
      expect(warm).toEqual(here);
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const hits = ['memory', 'disk']
        .map((tier) => metric(text, `scylla_loader_cache_hits_total{tier="${tier}"}`) || 0)
        .reduce((a, b) => a + b);
      expect(hits).toBeGreaterThanOrEqual(GOOD);
    } finally {
      other.close();
      loader.kill('SIGTERM');
      await done;
    }
  });

  it('grey raw output and JPEG / WebP re-encoding give the asked sizes', async () => {
    const grey = await stream({ transform: { ...RRC, channels: 1 } });
    expect(grey[0]!.tensor!.shape.slice(1)).toEqual([48, 40, 1]);
    for (const output of ['jpeg', 'webp'] as const) {
      const batches = await stream({
        transform: {
          channels: 3,
          resize: 50,
          centerCrop: { height: 44, width: 50 },
          output,
          quality: 80,
          badImagePolicy: 'skip',
        },
      });
      expect(batches.every((b) => b.tensor === undefined)).toBe(true);
      const sample = batches[0]!.samples[0]!;
      const meta = await sharp(sample).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual([output, 50, 44]);
    }
  });

  it('bad images under FAIL end the stream with DATA_LOSS naming the sample and the reason', async () => {
    const err = await errorOf({ transform: { ...RRC, badImagePolicy: 'fail' } });
    expect(err.codeName).toBe('DATA_LOSS');
    const bad = [...byId].filter(([, f]) => f.kind !== 'good').map(([id]) => id);
    expect(bad.some((id) => err.message.includes(id))).toBe(true);
    expect(err.message).toMatch(/cannot be decoded|over the server's limit|is truncated/);
    expect(err.message).toContain('bad_image_policy SKIP');
  });

  it('a resize whose intermediate would be over the pixel limit gets the pixel_limit treatment: skipped and counted, or DATA_LOSS', async () => {
    const transform: TransformOptions = { ...RRC, resize: 512 };
    const failures = (text: string): number =>
      Number(
        /scylla_loader_transform_failures_total\{reason="pixel_limit"\} (\d+)/.exec(text)?.[1] ?? 0,
      );
    const before = failures(await metricsText());
    const batches = await stream({ dataset: ksLong, seed: 5, transform });
    const ids = batches.flatMap((b) => b.ids);
    expect(ids).toHaveLength(3);
    expect(ids).not.toContain(longId);
    expect(batches.reduce((a, b) => a + b.skippedUndecodable, 0)).toBe(1);
    for (const b of batches) expect(b.tensor!.shape).toEqual([b.ids.length, 48, 40, 3]);
    // At least: a transform of an earlier test's stream, ended by its DATA_LOSS, may still count.
    expect(failures(await metricsText())).toBeGreaterThan(before);
    // Without the resize the long image is within every bound and is transformed.
    const plain = await stream({ dataset: ksLong, seed: 5, transform: RRC });
    expect(plain.flatMap((b) => b.ids)).toContain(longId);
    const err = await errorOf({
      dataset: ksLong,
      transform: { ...transform, badImagePolicy: 'fail' },
    });
    expect(err.codeName).toBe('DATA_LOSS');
    expect(err.message).toContain(longId);
    expect(err.message).toContain('resized image would be 30720x512');
  });

  it('invalid transforms get INVALID_ARGUMENT naming the field and the allowed range', async () => {
    const cases: [TransformOptions, RegExp][] = [
      [
        { channels: 2 as 3, centerCrop: { height: 8, width: 8 } },
        /transform\.channels 2 .* 1 \(grey\) or 3/,
      ],
      [{ channels: 3 }, /RAW needs center_crop or random_resized_crop/],
      [
        { channels: 3, centerCrop: { height: 0, width: 8 } },
        /center_crop\.height 0 is out of range: use 1 to 4096/,
      ],
      [
        { channels: 3, resize: 5000, centerCrop: { height: 8, width: 8 } },
        /transform\.resize 5000/,
      ],
      [{ ...RRC, horizontalFlip: 1.5 }, /horizontal_flip 1\.5 is not a probability/],
      [
        { ...RRC, randomResizedCrop: { height: 8, width: 8, scale: [0.5, 0.2] } },
        /scale \[0\.5, 0\.2\]/,
      ],
      [{ ...RRC, quality: 80 }, /quality 80 applies to JPEG or WebP output only/],
      [{ channels: 3, output: 'jpeg', quality: 101 }, /quality 101 is out of range: use 1 to 100/],
      [
        { channels: 3, centerCrop: { height: 4096, width: 4096 } },
        /over the server's response limit/,
      ],
    ];
    for (const [transform, message] of cases) {
      const err = await errorOf({ batchSize: 8, transform });
      expect(err.codeName, JSON.stringify(transform)).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(message);
    }
  });
});

/** Pixel for pixel against sharp itself: the sharp path (the fallback) does what it should. */
describe('server-side transforms on sharp, against sharp directly', () => {
  useLoader('off');

  it('resize + center crop (+ mirror, + zero padding) equals sharp directly, pixel for pixel, for JPEG, EXIF-rotated, CMYK, grey and RGBA inputs', async () => {
    const variants = [
      { channels: 3, resize: 72, height: 64, width: 60, flip: false },
      { channels: 1, resize: 72, height: 64, width: 60, flip: false },
      { channels: 3, resize: 72, height: 63, width: 57, flip: true },
      // Crops larger than some resized images: zero rows or columns on both sides (one more
      // below or right). The resize stays under 4x: beyond it libjpeg decodes JPEGs at a
      // reduced size (see transformImage), which a full decode as reference would not match.
      { channels: 3, resize: 60, height: 71, width: 63, flip: true },
    ] as const;
    for (const v of variants) {
      const batches = await stream({
        shuffle: 'none',
        transform: {
          channels: v.channels,
          resize: v.resize,
          centerCrop: { height: v.height, width: v.width },
          horizontalFlip: v.flip ? 1 : 0,
          badImagePolicy: 'skip',
        },
      });
      let checked = 0;
      for (const b of batches) {
        expect(b.tensor!.shape).toEqual([b.ids.length, v.height, v.width, v.channels]);
        for (const [i, id] of b.ids.entries()) {
          const file = byId.get(id)!;
          const oriented = await orientedRaw(file.data, v.channels);
          const short = Math.min(oriented.width, oriented.height);
          const portrait = oriented.width <= oriented.height;
          const w = portrait ? v.resize : Math.floor((v.resize * oriented.width) / short);
          const h = portrait ? Math.floor((v.resize * oriented.height) / short) : v.resize;
          // Orient and convert, then resize the decoded pixels, then torchvision's center crop.
          const resized = await sharp(oriented.data, {
            raw: { width: oriented.width, height: oriented.height, channels: v.channels },
          })
            .resize(w, h, { fit: 'fill', kernel: 'linear' })
            // sharp writes sRGB unless told otherwise, whatever its input.
            .toColourspace(v.channels === 3 ? 'srgb' : 'b-w')
            .raw()
            .toBuffer();
          const expected = centerCropReference(
            resized,
            w,
            h,
            v.channels,
            v.height,
            v.width,
            v.flip,
          );
          expect(
            Buffer.from(b.samples[i]!).equals(expected),
            `${file.key} ${JSON.stringify(v)}`,
          ).toBe(true);
          checked++;
        }
      }
      expect(checked).toBe(GOOD);
    }
  });

  it('a random-resized crop with flip equals sharp directly for the geometry drawn from (seed, epoch, id)', async () => {
    const seed = 77n;
    const epoch = 2;
    const batches = await stream({
      seed,
      firstEpoch: epoch,
      transform: { ...RRC, horizontalFlip: 0.5 },
    });
    let flipped = 0;
    for (const b of batches) {
      for (const [i, id] of b.ids.entries()) {
        const file = byId.get(id)!;
        const random = new SampleRandom(seed, epoch, Buffer.from(uuidParse(id)));
        const oriented = await orientedRaw(file.data, 3);
        const region = randomResizedRegion(
          oriented.width,
          oriented.height,
          [0.08, 1],
          [3 / 4, 4 / 3],
          random,
        );
        const flip = random.uniform() < 0.5;
        if (flip) flipped++;
        const cropped = await sharp(oriented.data, {
          raw: { width: oriented.width, height: oriented.height, channels: 3 },
        })
          .extract(region)
          .resize(40, 48, { fit: 'fill', kernel: 'linear' })
          .raw()
          .toBuffer();
        const expected = cropRaw(cropped, 40, 3, { left: 0, top: 0, width: 40, height: 48 }, flip);
        expect(Buffer.from(b.samples[i]!).equals(expected), file.key).toBe(true);
      }
    }
    expect(flipped).toBeGreaterThan(0);
    expect(flipped).toBeLessThan(GOOD);
  });
});
