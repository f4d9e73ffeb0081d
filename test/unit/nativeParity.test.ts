import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { benchPython } from '../support/index.js';
import {
  loadNativeTransform,
  type NativePlan,
  type NativeTransformModule,
} from '../../src/core/transform/nativeTransform.js';

/**
 * Pixel parity of the native transform (`native/`) with what a PyTorch trainer computes from
 * the same file: torchvision's decode (EXIF orientation applied), `resized_crop` (bilinear,
 * antialiased) and horizontal flip, by `test/support/torchvision_reference.py`. The loader
 * replaces the trainer's own decode + RandomResizedCrop, so a model must see the same pixels up
 * to rounding; a crop off by a pixel, a resize without antialiasing, a wrong orientation or a
 * wrong colour conversion must fail here.
 *
 * The fixtures are small committed images (`test/fixtures/images/make.py` says how they were
 * made), one per decoder path the native module takes: baseline colour and grey JPEG, Adobe
 * CMYK JPEG, EXIF orientations 6 (swaps the size) and 3, 8-bit grey, RGB, RGBA and palette PNG.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const IMAGES = path.resolve(here, '../fixtures/images');
const REFERENCE_SCRIPT = path.resolve(here, '../support/torchvision_reference.py');

/**
 * Mean absolute difference allowed per case, in 8-bit levels. Both sides run Pillow's
 * antialiased bilinear filter in fixed point, so a correct implementation differs by rounding
 * only: measured 0.04 to 0.21 per case at full-size decode, 0.77 and 0.90 for the two
 * DCT-scaled cases below. A crop moved by 1 or 2 px measured 1.2 to 22 (every case fails), a
 * reference without antialiasing 1.3 to 9.5 on every downscaling case.
 */
const MEAN_BOUND = 1.0;

/**
 * Largest single difference allowed, in 8-bit levels, where the native module decodes at full
 * size: rounding only, measured maximum 1 in every such case. A JPEG crop decoded without the
 * chroma of the columns beyond its edges measured 3 to 31 here, with means of only 0.2 to 0.4:
 * this bound, not the mean's, is what catches one wrong column.
 */
const MAX_BOUND = 2;

/**
 * Largest single difference allowed where the output is at most 1/4 of the region on both axes:
 * there the native module decodes a JPEG at 1/2 size with libjpeg's DCT scaling (native/README),
 * whose scaled IDCT is not the full-size decode a trainer resizes, so high-contrast edges move
 * by a few levels (measured maxima: 13 on rgb.jpg, 6 on cmyk.jpg, 5 on rgb.jpg in grey; every
 * other such case, PNG or not DCT-scaled, 1).
 */
const MAX_BOUND_DCT_SCALED = 16;

/** Gives the Python subprocess time to import torch on a loaded machine (about 3 s idle). */
const REFERENCE_TIMEOUT_MS = 120_000;

/** A fixture and the output channel counts it is checked with. */
interface Fixture {
  name: string;
  channels: readonly (1 | 3)[];
}

/**
 * Every fixture with its natural channel count; colour and grey sources also with the other
 * count, since colour to grey (PIL's 601 luma) and grey to colour (replication) are
 * conversions of their own, and the EXIF-6 one in grey to check the conversion after rotating.
 */
const FIXTURES: readonly Fixture[] = [
  { name: 'rgb.jpg', channels: [3, 1] },
  { name: 'grey.jpg', channels: [1, 3] },
  { name: 'cmyk.jpg', channels: [3] },
  { name: 'exif6.jpg', channels: [3, 1] },
  { name: 'exif3.jpg', channels: [3] },
  { name: 'grey.png', channels: [1, 3] },
  { name: 'rgb.png', channels: [3, 1] },
  { name: 'rgba.png', channels: [3] },
  { name: 'palette.png', channels: [3] },
];

/** A crop window in oriented coordinates (after EXIF orientation), its output size, the flip. */
interface Window {
  label: string;
  left: number;
  top: number;
  width: number;
  height: number;
  outWidth: number;
  outHeight: number;
  flip: boolean;
}

/**
 * The windows checked on an oriented image of `width x height`. None is centred or square, so
 * a swapped axis, a mirrored orientation or a flip applied before the crop shows.
 * - down: about 3/4 of the image to 1/2.5 of its size (at most 48 px): the antialiased
 *   downscale, where a plain bilinear resize would alias the noise;
 * - up: 30x24 px to 96x96: upscaling, where antialiasing must change nothing;
 * - whole: all of the image to about 1/4 of its size; where both axes shrink 4x (rgb.jpg,
 *   cmyk.jpg) the JPEG path decodes at 1/2 scale with libjpeg's DCT scaling;
 * - flip: the down window, mirrored;
 * - imcu: columns 16 to 47 to twice their size. A JPEG crop is decoded from a 16-px (iMCU)
 *   boundary, and its chroma upsampling needs the columns beyond both edges: edges on such
 *   a boundary (or an even right edge) are where a decoder that cuts too tightly goes wrong.
 */
function windowsOf(width: number, height: number): Window[] {
  const down = {
    left: Math.floor(width / 8) + 1,
    top: Math.floor(height / 8),
    width: Math.round((3 * width) / 4),
    height: Math.round((3 * height) / 4),
  };
  const downOut = {
    outWidth: Math.min(48, Math.round(down.width / 2.5)),
    outHeight: Math.min(48, Math.round(down.height / 2.5)),
  };
  return [
    { label: 'down', ...down, ...downOut, flip: false },
    {
      label: 'up',
      left: Math.floor(width / 3),
      top: Math.floor(height / 4) + 1,
      width: 30,
      height: 24,
      outWidth: 96,
      outHeight: 96,
      flip: false,
    },
    {
      label: 'whole',
      left: 0,
      top: 0,
      width,
      height,
      outWidth: Math.round(width / 4),
      outHeight: Math.round(height / 4),
      flip: false,
    },
    { label: 'flip', ...down, ...downOut, flip: true },
    {
      label: 'imcu',
      left: 16,
      top: Math.floor(height / 4),
      width: 32,
      height: 24,
      outWidth: 64,
      outHeight: 48,
      flip: false,
    },
  ];
}

/** The max bound of a window: looser when the native JPEG path may decode at 1/2 size. */
function maxBoundOf(w: Window): number {
  const dctScaled = w.outWidth * 4 <= w.width && w.outHeight * 4 <= w.height;
  return dctScaled ? MAX_BOUND_DCT_SCALED : MAX_BOUND;
}

/** One image, channel count and window. */
interface ParityCase {
  image: string;
  channels: 1 | 3;
  window: Window;
  /** The native module's output, HWC. */
  native: Buffer;
}

/** A case's job for torchvision_reference.py (its stdin format). */
interface ReferenceJob {
  image: string;
  top: number;
  left: number;
  height: number;
  width: number;
  out_h: number;
  out_w: number;
  channels: 1 | 3;
  flip: boolean;
}

/** What torchvision_reference.py answers per job. */
interface ReferenceResult {
  pixels: string;
  decoder: 'torchvision' | 'PIL';
}

/** A case's comparison, kept for the table and the assertions. */
interface Measured {
  image: string;
  channels: 1 | 3;
  window: string;
  decoder: string;
  mean: number;
  max: number;
  maxBound: number;
}

/** The native module, or a failure that says how to build it. */
function nativeModule(): NativeTransformModule {
  const status = loadNativeTransform();
  if (!status.module) {
    throw new Error(
      `the native transform module is missing (${status.error ?? status.file}): ` +
        'build it with native/build.sh',
    );
  }
  return status.module;
}

/** Runs every case through the native module, with the plan the loader would hand it. */
function runNative(native: NativeTransformModule): ParityCase[] {
  const cases: ParityCase[] = [];
  for (const fixture of FIXTURES) {
    const data = readFileSync(path.join(IMAGES, fixture.name));
    const probe = native.probe(data);
    expect(probe.native, `${fixture.name}: ${probe.reason ?? ''}`).toBe(true);
    // probe reports the stored size; orientations 5 to 8 turn the image by 90 degrees.
    const swap = probe.orientation >= 5;
    const source = {
      width: swap ? probe.height : probe.width,
      height: swap ? probe.width : probe.height,
    };
    for (const channels of fixture.channels) {
      for (const window of windowsOf(source.width, source.height)) {
        const plan: NativePlan = {
          source,
          region: {
            left: window.left,
            top: window.top,
            width: window.width,
            height: window.height,
          },
          output: { width: window.outWidth, height: window.outHeight },
          flip: window.flip,
          width: window.outWidth,
          height: window.outHeight,
          channels,
          interpolation: 'bilinear',
          maxPixels: 1e8,
        };
        const out = Buffer.alloc(window.outWidth * window.outHeight * channels);
        native.transform(data, plan, out, 0);
        cases.push({ image: fixture.name, channels, window, native: out });
      }
    }
  }
  return cases;
}

/** All reference outputs from one Python process (importing torch dominates its time). */
function runReference(cases: readonly ParityCase[]): ReferenceResult[] {
  const jobs: ReferenceJob[] = cases.map(({ image, channels, window: w }) => ({
    image: path.join(IMAGES, image),
    top: w.top,
    left: w.left,
    height: w.height,
    width: w.width,
    out_h: w.outHeight,
    out_w: w.outWidth,
    channels,
    flip: w.flip,
  }));
  const python = benchPython();
  const run = spawnSync(python, [REFERENCE_SCRIPT], {
    input: JSON.stringify(jobs),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.status !== 0) {
    throw new Error(
      `${python} ${REFERENCE_SCRIPT} failed (${run.error?.message ?? `exit ${run.status}`}): ` +
        run.stderr,
    );
  }
  return JSON.parse(run.stdout) as ReferenceResult[];
}

/** A window as the table prints it: `label WxH@left,top->WxH [flip]`. */
function describeWindow(w: Window): string {
  const flip = w.flip ? ' flip' : '';
  return `${w.label} ${w.width}x${w.height}@${w.left},${w.top}->${w.outWidth}x${w.outHeight}${flip}`;
}

/** Mean and max absolute difference of two equally long byte buffers. */
function compare(a: Buffer, b: Buffer): { mean: number; max: number } {
  expect(a.length).toBe(b.length);
  let sum = 0;
  let max = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    if (d > max) max = d;
  }
  return { mean: sum / a.length, max };
}

describe('native transform parity with torchvision', () => {
  const measured: Measured[] = [];

  beforeAll(() => {
    const cases = runNative(nativeModule());
    const references = runReference(cases);
    expect(references).toHaveLength(cases.length);
    console.log(
      `${'image'.padEnd(12)} ch ${'window'.padEnd(36)} ${'decoder'.padEnd(11)} ${'mean'.padStart(6)} max`,
    );
    cases.forEach((c, i) => {
      const reference = references[i]!;
      const { mean, max } = compare(c.native, Buffer.from(reference.pixels, 'base64'));
      const window = describeWindow(c.window);
      measured.push({
        image: c.image,
        channels: c.channels,
        window,
        decoder: reference.decoder,
        mean,
        max,
        maxBound: maxBoundOf(c.window),
      });
      console.log(
        `${c.image.padEnd(12)} ${String(c.channels).padStart(2)} ${window.padEnd(36)} ` +
          `${reference.decoder.padEnd(11)} ${mean.toFixed(3).padStart(6)} ${String(max).padStart(3)}`,
      );
    });
  }, REFERENCE_TIMEOUT_MS);

  it.each(FIXTURES.map((f) => f.name))('%s matches torchvision in every window', (name) => {
    const ofImage = measured.filter((m) => m.image === name);
    expect(ofImage.length).toBeGreaterThan(0);
    for (const m of ofImage) {
      const what = `${m.image} ${m.channels} ch ${m.window}`;
      expect(m.mean, `${what}: mean abs diff`).toBeLessThanOrEqual(MEAN_BOUND);
      expect(m.max, `${what}: max abs diff`).toBeLessThanOrEqual(m.maxBound);
    }
  });
});
