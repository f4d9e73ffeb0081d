import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ClientError,
  type DecodedBatch,
  LoaderClient,
  type StreamBatchesOptions,
  type TransformOptions,
} from '../../src/client/index.js';
import {
  createDbClient,
  datasetNamespace,
  ingestDataset,
  readManifest,
  sampleId,
} from '../../src/core/index.js';
import type { LoaderServer } from '../../src/server/index.js';
import { dropKeyspace, testDbConfig, uniqueKeyspace } from '../support/dbHelpers.js';
import { startTestServer } from '../support/loaderServer.js';
import { type PairKind, mismatchShare, segmentationPair } from '../support/maskDataset.js';

/**
 * Segmentation pairs through the real loader and database: each mask is a function of its
 * image (red > 127), so after the server's RandomResizedCrop, resize and flip the streamed
 * mask must be that function of the streamed image, on the native and the sharp path alike.
 */

const KINDS: PairKind[] = [
  'jpeg+grey',
  'jpeg-exif6+grey',
  'webp+palette',
  'png+palette',
  'jpeg+rgb',
];
const PAIRS = 20;
const H = 64;
const W = 56;
const resumeKey = randomBytes(32).toString('hex');
let db: cassandra.Client;
/** Good pairs. */
let ks: string;
/** Mask value where red > 127, by sample id. */
let hiById: Map<string, number>;
/** Good pairs, one whose mask is 10 pixels narrower, one without a mask. */
let ksBad: string;
let wrongSizeId: string;
/** Two good pairs and the narrow mask only: a FAIL stream must end on that one. */
let ksWrong: string;
let onlyWrongId: string;
let server: LoaderServer;
let client: LoaderClient;

interface Entry {
  key: string;
  image: Buffer;
  mask?: Buffer;
}

async function ingestPairs(dataset: string, entries: Entry[]): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-masks-'));
  await mkdir(path.join(dir, 'files'));
  const lines = ['path,label,label_blob_path'];
  for (const e of entries) {
    await writeFile(path.join(dir, `${e.key}.img`), e.image);
    if (e.mask) await writeFile(path.join(dir, `${e.key}.mask`), e.mask);
    lines.push(`${e.key}.img,0,${e.mask ? `${e.key}.mask` : ''}`);
  }
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(db, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv')),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 8,
    strict: false,
  });
}

beforeAll(async () => {
  db = await createDbClient(testDbConfig());
  ks = uniqueKeyspace();
  hiById = new Map();
  const entries: Entry[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const kind = KINDS[i % KINDS.length]!;
    const pair = await segmentationPair(kind, 120 + ((i * 37) % 120), 100 + ((i * 53) % 90), i + 1);
    const key = `files/${i}`;
    entries.push({ key, image: pair.image, mask: pair.mask });
    hiById.set(sampleId(`${key}.img`, datasetNamespace(ks)), pair.hi);
  }
  await ingestPairs(ks, entries);
  ksBad = uniqueKeyspace();
  const bad = entries.slice(0, 4);
  const narrow = await segmentationPair('jpeg+grey', 110, 100, 99);
  const wide = await segmentationPair('jpeg+grey', 120, 100, 99);
  bad.push({ key: 'files/wrong-size', image: wide.image, mask: narrow.mask });
  bad.push({ key: 'files/no-mask', image: wide.image });
  await ingestPairs(ksBad, bad);
  wrongSizeId = sampleId('files/wrong-size.img', datasetNamespace(ksBad));
  ksWrong = uniqueKeyspace();
  await ingestPairs(ksWrong, [...entries.slice(0, 2), bad[4]!]);
  onlyWrongId = sampleId('files/wrong-size.img', datasetNamespace(ksWrong));
}, 120_000);

afterAll(async () => {
  await dropKeyspace(db, ks);
  await dropKeyspace(db, ksBad);
  await dropKeyspace(db, ksWrong);
  await db.shutdown();
});

const SEGMENT: TransformOptions = {
  channels: 3,
  randomResizedCrop: { height: H, width: W, scale: [0.2, 1] },
  horizontalFlip: 0.5,
  masks: true,
};

async function stream(req: Partial<StreamBatchesOptions>): Promise<DecodedBatch[]> {
  const out: DecodedBatch[] = [];
  for await (const b of client.streamBatches({ dataset: ks, split: 'all', batchSize: 8, ...req })) {
    out.push(b);
  }
  return out;
}

/** Each sample's transformed image and mask (copies), by id. */
function pairsOf(batches: DecodedBatch[]): Map<string, { image: Buffer; mask: Buffer }> {
  const out = new Map<string, { image: Buffer; mask: Buffer }>();
  for (const b of batches) {
    expect(b.masks?.shape).toEqual([b.ids.length, H, W, 1]);
    expect(b.labelBlobs).toBeUndefined();
    b.ids.forEach((id, i) => {
      out.set(id, {
        image: Buffer.from(b.samples[i]!),
        mask: Buffer.from(b.masks!.data.subarray(i * H * W, (i + 1) * H * W)),
      });
    });
  }
  return out;
}

describe.each([
  ['native', 'auto'],
  ['sharp', 'off'],
] as const)('masks follow their images through a stream (%s)', (_, mode) => {
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

  it.each([0, 160])(
    'RandomResizedCrop and flip (resize %i first): every mask is the function of its image',
    async (resize) => {
      const pairs = pairsOf(await stream({ seed: 5, transform: { ...SEGMENT, resize } }));
      expect(pairs.size).toBe(PAIRS);
      for (const [id, { image, mask }] of pairs) {
        expect(mismatchShare(image, mask, W, H, 3, hiById.get(id)!), id).toBeLessThan(0.01);
      }
    },
  );

  it('without the field the blobs come as stored, and the same check finds them misaligned', async () => {
    const batches = await stream({ seed: 5, transform: { ...SEGMENT, masks: false } });
    let misaligned = 0;
    for (const b of batches) {
      expect(b.masks).toBeUndefined();
      for (let i = 0; i < b.ids.length; i++) {
        // What a trainer would do with the stored mask: resize it to the batch's size.
        const { data } = await sharp(b.labelBlobs![i]!)
          .extractChannel(0)
          .resize(W, H, { fit: 'fill', kernel: 'nearest' })
          .raw()
          .toBuffer({ resolveWithObject: true });
        const hi = hiById.get(b.ids[i]!)!;
        const naive = hi === 1 ? data.map((v) => (v > 0 ? 1 : 0)) : data;
        if (mismatchShare(b.samples[i]!, naive, W, H, 3, hi) > 0.03) misaligned++;
      }
    }
    expect(misaligned).toBeGreaterThanOrEqual(PAIRS * 0.8);
  });

  it('a mask of another size ends the stream under FAIL, naming the sample and both sizes', async () => {
    const err = await stream({ dataset: ksWrong, transform: SEGMENT }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClientError);
    expect((err as ClientError).codeName).toBe('DATA_LOSS');
    expect((err as ClientError).details).toContain(
      `sample ${onlyWrongId}: the mask is 110x100, its image 120x100 (as stored)`,
    );
  });

  it('under SKIP the wrong-size and the missing mask are left out and counted', async () => {
    const batches = await stream({
      dataset: ksBad,
      transform: { ...SEGMENT, badImagePolicy: 'skip' },
    });
    const skipped = batches.reduce((n, b) => n + b.skippedUndecodable, 0);
    expect(skipped).toBe(2);
    expect(batches.reduce((n, b) => n + b.ids.length, 0)).toBe(4);
    expect(batches.flatMap((b) => b.ids)).not.toContain(wrongSizeId);
  });

  it('masks with JPEG output are INVALID_ARGUMENT', async () => {
    const err = await stream({
      transform: { channels: 3, centerCrop: { height: 8, width: 8 }, output: 'jpeg', masks: true },
    }).catch((e: unknown) => e);
    expect((err as ClientError).codeName).toBe('INVALID_ARGUMENT');
    expect((err as ClientError).details).toContain('transform.masks needs RAW output');
  });
});
