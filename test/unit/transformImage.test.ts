import zlib from 'node:zlib';
import sharp, { type Sharp } from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import { serveSettingNames } from '../../src/cli/settings/serveSettings.js';
import { SampleRandom } from '../../src/core/transform/SampleRandom.js';
import {
  loadNativeTransform,
  type NativeTransformModule,
} from '../../src/core/transform/nativeTransform.js';
import { planTransform } from '../../src/core/transform/planTransform.js';
import { SYNC_MAX_PIXELS, transformImage } from '../../src/core/transform/transformImage.js';
import { countJpegScans, MAX_JPEG_SCANS } from '../../src/core/transform/jpegScans.js';
import type {
  CropSpec,
  OutputSpec,
  TransformSpec,
} from '../../src/core/transform/TransformSpec.js';
import { UndecodableImageError } from '../../src/core/transform/UndecodableImageError.js';
import { patternPixels } from '../support/imageDataset.js';

const LIMIT = 50_000_000;
const random = (i = 0): SampleRandom => new SampleRandom(1n, 0, Buffer.alloc(16, i));
const inputs: Record<string, Buffer> = {};
/** 120 x 90, libjpeg's default progression (not in `inputs`: the option matrix has its own). */
let progressiveJpeg: Buffer;

beforeAll(async () => {
  const raw = (w: number, h: number, seed: number): Sharp =>
    sharp(patternPixels(w, h, seed), { raw: { width: w, height: h, channels: 3 } });
  inputs['rgb.jpg'] = await raw(120, 90, 1).jpeg().toBuffer();
  inputs['exif6.jpg'] = await raw(120, 90, 2).jpeg().withMetadata({ orientation: 6 }).toBuffer();
  inputs['cmyk.jpg'] = await raw(90, 120, 3).toColourspace('cmyk').jpeg().toBuffer();
  inputs['grey.png'] = await raw(100, 100, 4).toColourspace('b-w').png().toBuffer();
  inputs['rgba.png'] = await raw(80, 110, 5).ensureAlpha(0.3).png().toBuffer();
  inputs['grey16.png'] = await raw(64, 48, 6).toColourspace('grey16').png().toBuffer();
  progressiveJpeg = await raw(120, 90, 7).jpeg({ progressive: true }).toBuffer();
});

/**
 * `jpeg` with its last scan (SOS header and entropy-coded data) repeated `extra` more times
 * before its end marker: the shape of a scan-flooding JPEG (a real one makes each scan a valid,
 * near-empty refinement, so a decoder without a limit walks every one).
 */
function withExtraScans(jpeg: Buffer, extra: number): Buffer {
  const eoi = jpeg.lastIndexOf(Buffer.from([0xff, 0xd9]));
  // Entropy-coded data cannot hold FF DA (a 0xFF there is followed by 0x00 or a restart).
  const scan = jpeg.subarray(jpeg.lastIndexOf(Buffer.from([0xff, 0xda])), eoi);
  return Buffer.concat([
    jpeg.subarray(0, eoi),
    ...Array.from({ length: extra }, () => scan),
    jpeg.subarray(eoi),
  ]);
}

function spec(parts: Partial<TransformSpec>): TransformSpec {
  return {
    channels: 3,
    resize: 0,
    crop: { kind: 'none' },
    flipProbability: 0,
    interpolation: 'bilinear',
    output: { format: 'raw' },
    badImage: 'fail',
    ...parts,
  };
}

/** The oriented size of an input, as a trainer sees it. */
const ORIENTED: Record<string, [number, number]> = {
  'rgb.jpg': [120, 90],
  'exif6.jpg': [90, 120],
  'cmyk.jpg': [90, 120],
  'grey.png': [100, 100],
  'rgba.png': [80, 110],
  'grey16.png': [64, 48],
};

const nativeStatus = loadNativeTransform();

/**
 * Every test runs on both paths: the native module (JPEG and 8-bit PNG raw output; other
 * samples fall back to sharp inside it) and sharp alone, the fallback.
 */
const DECODERS: [string, NativeTransformModule | undefined][] = [
  ['native', nativeStatus.module],
  ['sharp', undefined],
];

it('the native module is built (native/build.sh; scripts/setup.sh runs it)', () => {
  expect(nativeStatus.error).toBeUndefined();
  expect(nativeStatus.module).toBeDefined();
});

it('the native path gives the same bytes on the thread pool (large images) as inline (small ones)', async () => {
  const native = nativeStatus.module!;
  const s = spec({
    crop: { kind: 'random-resized', height: 40, width: 40, scale: [0.3, 1], ratio: [3 / 4, 4 / 3] },
    flipProbability: 0.5,
  });
  for (const [w, h] of [
    [100, 80],
    [300, 200],
  ] as const) {
    const data = await sharp(patternPixels(w, h, 11), { raw: { width: w, height: h, channels: 3 } })
      .jpeg()
      .toBuffer();
    expect(w * h > SYNC_MAX_PIXELS).toBe(w === 300);
    const out = await transformImage(data, s, random(5), LIMIT, native);
    expect(out.decoder).toBe('native');
    // The same plan, drawn from the same (seed, epoch, id), run inline by hand.
    const plan = planTransform(s, w, h, random(5), LIMIT);
    const inline = Buffer.alloc(plan.width * plan.height * 3);
    native.transform(
      data,
      { ...plan, channels: 3, interpolation: 'bilinear', maxPixels: LIMIT },
      inline,
      0,
    );
    expect(out.data.equals(inline), `${w}x${h}`).toBe(true);
  }
});

describe('countJpegScans', () => {
  it('counts the scans of baseline and progressive JPEGs, not the bytes of marker segments', async () => {
    const baseline = inputs['rgb.jpg']!;
    const progressive = progressiveJpeg;
    expect(countJpegScans(baseline, MAX_JPEG_SCANS)).toBe(1);
    const scans = countJpegScans(progressive, MAX_JPEG_SCANS);
    // libjpeg's default progression for colour: 10 scans.
    expect(scans).toBeGreaterThan(5);
    expect(scans).toBeLessThan(20);
    expect(countJpegScans(withExtraScans(progressive, 7), MAX_JPEG_SCANS)).toBe(scans + 7);
    // An APP segment holding SOS-like bytes (an EXIF thumbnail has whole scans) counts nothing.
    const body = Buffer.alloc(600, 0);
    for (let i = 0; i < body.length; i += 3) body.set([0xff, 0xda], i);
    const app = Buffer.concat([Buffer.from([0xff, 0xe1, 0x02, 0x5a]), body]);
    const withApp = Buffer.concat([baseline.subarray(0, 2), app, baseline.subarray(2)]);
    expect(countJpegScans(withApp, MAX_JPEG_SCANS)).toBe(1);
    // Counting stops past the limit.
    expect(countJpegScans(withExtraScans(progressive, 5_000), 100)).toBe(101);
  });
});

it('runs a tiny image upscaled on the thread pool: the largest buffer of the plan decides', async () => {
  const native = nativeStatus.module!;
  const calls: string[] = [];
  const spy: NativeTransformModule = {
    probe: (data) => native.probe(data),
    transform: (...args) => {
      calls.push('inline');
      native.transform(...args);
    },
    transformAsync: (...args) => {
      calls.push('pool');
      return native.transformAsync(...args);
    },
  };
  // An MNIST-sized grey PNG (28 x 28): its source alone is far under the inline threshold.
  const mnist = await sharp(patternPixels(28, 28, 9, 1), {
    raw: { width: 28, height: 28, channels: 1 },
  })
    .png()
    .toBuffer();
  expect(28 * 28).toBeLessThan(SYNC_MAX_PIXELS);
  const rrc = (side: number): CropSpec => ({
    kind: 'random-resized',
    height: side,
    width: side,
    scale: [0.08, 1],
    ratio: [3 / 4, 4 / 3],
  });
  const cases: [string, Partial<TransformSpec>, string][] = [
    ['as is', {}, 'inline'],
    ['resize to 128 (the threshold)', { resize: 128 }, 'inline'],
    ['resize to 1024', { resize: 1024 }, 'pool'],
    ['resize to 1024, random crop 64', { resize: 1024, crop: rrc(64) }, 'pool'],
    ['random-resized crop to 1024', { crop: rrc(1024) }, 'pool'],
    ['center crop padded to 1024', { crop: { kind: 'center', height: 1024, width: 1024 } }, 'pool'],
  ];
  for (const [what, parts, where] of cases) {
    calls.length = 0;
    const out = await transformImage(mnist, spec({ channels: 1, ...parts }), random(), LIMIT, spy);
    expect(out.decoder, what).toBe('native');
    expect(calls, what).toEqual([where]);
  }
});

it('the native module refuses a plan over its pixel limit and a JPEG over its scan limit itself', () => {
  const native = nativeStatus.module!;
  const data = progressiveJpeg;
  const base = { source: { width: 120, height: 90 }, flip: false, channels: 3 as const };
  const call = (plan: object, out = Buffer.alloc(32 * 32 * 3)): string => {
    try {
      native.transform(
        data,
        { ...base, interpolation: 'bilinear', maxPixels: LIMIT, ...plan } as never,
        out,
        0,
      );
      return 'decoded';
    } catch (err) {
      return (err as Error).message;
    }
  };
  // The plan's resized image (1,200 x 900) is over a limit of 100,000 pixels, the source not:
  // refused before it is allocated, whoever made the plan.
  const resize = {
    resize: { width: 1200, height: 900 },
    region: { left: 0, top: 0, width: 32, height: 32 },
  };
  const plan = { ...resize, output: { width: 32, height: 32 }, width: 32, height: 32 };
  expect(call(plan)).toBe('decoded');
  expect(call({ ...plan, maxPixels: 100_000 })).toMatch(
    /^pixel_limit: .*resized image would be 1200x900/,
  );
  // libjpeg-turbo's own scan limit, behind the caller's count.
  expect(call({ ...plan, maxScans: MAX_JPEG_SCANS })).toBe('decoded');
  expect(call({ ...plan, maxScans: 3 })).toMatch(/^too_many_scans: /);
});

describe.each(DECODERS)('transformImage (%s)', (_name, native) => {
  it('gives the planned shape and dtype for every option combination and input kind', async () => {
    const crops: CropSpec[] = [
      { kind: 'none' },
      { kind: 'center', height: 40, width: 30 },
      { kind: 'random-resized', height: 32, width: 48, scale: [0.08, 1], ratio: [3 / 4, 4 / 3] },
    ];
    const outputs: OutputSpec[] = [
      { format: 'raw' },
      { format: 'jpeg', quality: 80 },
      { format: 'webp', quality: 80 },
    ];
    let checked = 0;
    for (const [name, data] of Object.entries(inputs)) {
      for (const channels of [1, 3] as const) {
        for (const resize of [0, 50]) {
          for (const crop of crops) {
            for (const flipProbability of [0, 1]) {
              for (const output of outputs) {
                if (output.format === 'raw' && crop.kind === 'none') continue;
                const s = spec({ channels, resize, crop, flipProbability, output });
                const out = await transformImage(data, s, random(), LIMIT, native);
                const [w0, h0] = ORIENTED[name]!;
                const scaled =
                  resize === 0
                    ? [w0, h0]
                    : w0 <= h0
                      ? [resize, Math.floor((resize * h0) / w0)]
                      : [Math.floor((resize * w0) / h0), resize];
                const [w, h] = crop.kind === 'none' ? scaled : [crop.width, crop.height];
                const what = `${name} ${JSON.stringify({ channels, resize, crop: crop.kind, flipProbability, output: output.format })}`;
                expect([out.width, out.height], what).toEqual([w, h]);
                // The native path serves raw output of what it decodes; sharp the rest.
                const nativeKind = name !== 'grey16.png' && output.format === 'raw';
                expect(out.decoder, what).toBe(native && nativeKind ? 'native' : 'sharp');
                if (output.format === 'raw') {
                  expect(out.channels, what).toBe(channels);
                  expect(out.data.length, what).toBe(w! * h! * channels);
                } else {
                  const meta = await sharp(out.data).metadata();
                  expect([meta.format, meta.width, meta.height], what).toEqual([
                    output.format,
                    w,
                    h,
                  ]);
                }
                checked++;
              }
            }
          }
        }
      }
    }
    expect(checked).toBe(6 * 2 * 2 * 2 * 8);
  });

  it('takes sharp for a WebP sample and a 16-bit PNG, and says which decoder served', async () => {
    const webp = await sharp(patternPixels(64, 48, 7), {
      raw: { width: 64, height: 48, channels: 3 },
    })
      .webp()
      .toBuffer();
    const s = spec({ crop: { kind: 'center', height: 16, width: 16 } });
    for (const data of [webp, inputs['grey16.png']!]) {
      const out = await transformImage(data, s, random(), LIMIT, native);
      expect(out.decoder).toBe('sharp');
      expect(out.data.length).toBe(16 * 16 * 3);
    }
    const jpeg = await transformImage(inputs['rgb.jpg']!, s, random(), LIMIT, native);
    expect(jpeg.decoder).toBe(native ? 'native' : 'sharp');
  });

  it('mirrors exactly: flip 1 is flip 0 with every row reversed', async () => {
    for (const crop of [
      { kind: 'center', height: 40, width: 31 },
      { kind: 'random-resized', height: 30, width: 30, scale: [0.2, 0.5], ratio: [1, 1] },
    ] as const) {
      for (const resize of [0, 64]) {
        const a = await transformImage(
          inputs['rgb.jpg']!,
          spec({ crop, resize }),
          random(3),
          LIMIT,
          native,
        );
        const b = await transformImage(
          inputs['rgb.jpg']!,
          spec({ crop, resize, flipProbability: 1 }),
          random(3),
          LIMIT,
          native,
        );
        const mirrored = Buffer.alloc(a.data.length);
        for (let y = 0; y < a.height; y++) {
          for (let x = 0; x < a.width; x++) {
            const src = (y * a.width + (a.width - 1 - x)) * 3;
            a.data.copy(mirrored, (y * a.width + x) * 3, src, src + 3);
          }
        }
        expect(b.data.equals(mirrored), `${crop.kind} resize ${resize}`).toBe(true);
      }
    }
  });

  it('refuses undecodable bytes with the reason: empty, not an image, corrupt, truncated (whatever the crop reads)', async () => {
    const reasonOf = async (data: Buffer): Promise<string> => {
      try {
        await transformImage(
          data,
          spec({ crop: { kind: 'center', height: 8, width: 8 } }),
          random(),
          LIMIT,
          native,
        );
      } catch (err) {
        expect(err).toBeInstanceOf(UndecodableImageError);
        expect((err as UndecodableImageError).code).toBe('DATA_LOSS');
        return (err as UndecodableImageError).reason;
      }
      return 'decoded';
    };
    const jpeg = inputs['rgb.jpg']!;
    const corrupt = Buffer.from(jpeg);
    corrupt.fill(0x55, 200, corrupt.length - 2);
    const png = inputs['grey.png']!;
    expect(await reasonOf(Buffer.alloc(0))).toBe('empty');
    expect(await reasonOf(Buffer.from('not an image at all'))).toBe('unsupported_format');
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" width="20000" height="20000"/>';
    expect(await reasonOf(Buffer.from(svg))).toBe('unsupported_format');
    expect(await reasonOf(corrupt)).toBe('corrupt');
    // Truncated files fail whatever the crop reads (here the middle 8 x 8 only).
    expect(await reasonOf(jpeg.subarray(0, jpeg.length - 100))).toBe('truncated');
    expect(await reasonOf(png.subarray(0, png.length >> 1))).toBe('truncated');
    // A JPEG cut inside its header fails to decode at all.
    expect(await reasonOf(jpeg.subarray(0, 150))).toMatch(/^(corrupt|truncated)$/);
  });

  it('refuses a decompression bomb from its header, before allocating its pixels', async () => {
    // A PNG whose header says 60,000 x 60,000 (3.6 gigapixels, 10.8 GB as RGB) with a few
    // bytes of data: decoding it would allocate the lot.
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(60_000, 0);
    ihdr.writeUInt32BE(60_000, 4);
    ihdr.set([8, 2, 0, 0, 0], 8);
    const chunk = (type: string, body: Buffer): Buffer => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(body.length);
      const typeAndBody = Buffer.concat([Buffer.from(type, 'latin1'), body]);
      const crc = Buffer.alloc(4);
      crc.writeUInt32BE(zlib.crc32(typeAndBody) >>> 0);
      return Buffer.concat([len, typeAndBody, crc]);
    };
    const bomb = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr),
      chunk('IDAT', zlib.deflateSync(Buffer.alloc(1000))),
      chunk('IEND', Buffer.alloc(0)),
    ]);
    const rss = process.memoryUsage().rss;
    const err = await transformImage(
      bomb,
      spec({ crop: { kind: 'center', height: 8, width: 8 } }),
      random(),
      89_478_485,
      native,
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UndecodableImageError);
    expect((err as UndecodableImageError).reason).toBe('pixel_limit');
    expect((err as Error).message).toContain('60000x60000');
    expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 2 ** 20);
    // The limit named as the caller names it: a library caller its field, `serve` its variable.
    expect((err as Error).message).toMatch(/pixels, set by maxImagePixels$/);
    const served = await transformImage(
      bomb,
      spec({ crop: { kind: 'center', height: 8, width: 8 } }),
      random(),
      89_478_485,
      native,
      serveSettingNames(),
    ).catch((e: unknown) => e);
    expect((served as Error).message).toMatch(
      /pixels, set by --max-image-pixels \(SCYLLA_LOADER_MAX_IMAGE_PIXELS\)$/,
    );
  });

  it('refuses a long image whose resize would be over the pixel limit, before resizing it', async () => {
    // 2,000 x 40 (80,000 pixels) is under a limit of 100,000; resized to a shorter side of 224
    // it would be 11,200 x 224 (2.5 M pixels), though the output is only 32 x 32.
    const long = await sharp(patternPixels(2000, 40, 3), {
      raw: { width: 2000, height: 40, channels: 3 },
    })
      .jpeg()
      .toBuffer();
    const rrc: CropSpec = {
      kind: 'random-resized',
      height: 32,
      width: 32,
      scale: [0.08, 1],
      ratio: [3 / 4, 4 / 3],
    };
    for (const output of [{ format: 'raw' }, { format: 'jpeg', quality: 80 }] as const) {
      const s = spec({ resize: 224, crop: rrc, output });
      const err = await transformImage(long, s, random(), 100_000, native).catch((e: unknown) => e);
      expect(err, output.format).toBeInstanceOf(UndecodableImageError);
      expect((err as UndecodableImageError).reason).toBe('pixel_limit');
      expect((err as Error).message).toContain('resized image would be 11200x224');
      // Without the resize the image is transformed.
      const ok = await transformImage(long, spec({ crop: rrc, output }), random(), 100_000, native);
      expect([ok.width, ok.height]).toEqual([32, 32]);
    }
    // An upscaled output over the limit is refused the same way.
    const up = await transformImage(
      inputs['rgb.jpg']!,
      spec({ crop: { ...rrc, height: 400, width: 400 } }),
      random(),
      100_000,
      native,
    ).catch((e: unknown) => e);
    expect((up as UndecodableImageError).reason).toBe('pixel_limit');
  });

  it('refuses a JPEG of more scans than the limit before decoding it; a progressive JPEG passes', async () => {
    const progressive = progressiveJpeg;
    const s = spec({ crop: { kind: 'center', height: 16, width: 16 } });
    const ok = await transformImage(progressive, s, random(), LIMIT, native);
    expect(ok.decoder).toBe(native ? 'native' : 'sharp');
    expect(ok.data.length).toBe(16 * 16 * 3);
    const scans = countJpegScans(progressive, MAX_JPEG_SCANS);
    // At the limit: decoded (or refused by the decoder for its odd progression), never for scans.
    const atLimit = await transformImage(
      withExtraScans(progressive, MAX_JPEG_SCANS - scans),
      s,
      random(),
      LIMIT,
      native,
    ).catch((e: unknown) => e);
    expect((atLimit as UndecodableImageError).reason).not.toBe('too_many_scans');
    for (const extra of [MAX_JPEG_SCANS + 1 - scans, 5_000]) {
      const flood = withExtraScans(progressive, extra);
      const started = performance.now();
      const err = await transformImage(flood, s, random(), LIMIT, native).catch((e: unknown) => e);
      expect(err, `${extra} extra scans`).toBeInstanceOf(UndecodableImageError);
      expect((err as UndecodableImageError).reason).toBe('too_many_scans');
      expect((err as UndecodableImageError).code).toBe('DATA_LOSS');
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });
});
