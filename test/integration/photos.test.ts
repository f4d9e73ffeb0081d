import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPhotoPackages } from '../../src/datasets/photos/index.js';
import { listSourcePhotos, type SourcePhoto } from '../../src/testing/index.js';
import { PHOTO_PRESETS, type PhotoPresetName } from '../../src/datasets/photos/index.js';
import { photoImageIndex } from '../../src/testing/index.js';
import { writePhotoJpegs } from '../../src/datasets/photos/index.js';
import { runCli } from '../support/runCli.js';

const COUNT = 40;
/** Bands around each preset's target that real photos land in and noise or blanks would not. */
const MEAN_BAND: Record<PhotoPresetName, [number, number]> = {
  imagenet: [80_000, 140_000],
  small: [12_000, 30_000],
  tiny: [300, 900],
};

let tmp: string;
let sources: SourcePhoto[];

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sl-photos-'));
  // The real download (once per machine: the .deb files stay in the cache folder).
  sources = await listSourcePhotos(await fetchPhotoPackages());
}, 600_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function jpegsUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

describe('photo sources', () => {
  it('are the colour photos of both packages', () => {
    expect(sources.length).toBeGreaterThanOrEqual(40);
    expect(sources.some((s) => s.name.startsWith('mate-backgrounds/'))).toBe(true);
    expect(sources.some((s) => s.name.startsWith('opencv-doc/'))).toBe(true);
    for (const s of sources) expect(Math.min(s.width, s.height)).toBeGreaterThanOrEqual(300);
  });
});

describe.each(['imagenet', 'small', 'tiny'] as const)('writePhotoJpegs, preset %s', (preset) => {
  it('writes distinct photo-sized JPEGs once', { timeout: 60_000 }, async () => {
    const root = path.join(tmp, preset);
    const progress: number[] = [];
    const first = await writePhotoJpegs({
      root,
      count: COUNT,
      preset,
      sources,
      onProgress: (done) => progress.push(done),
    });
    expect(first.written).toBe(COUNT);
    expect(progress.at(-1)).toBe(COUNT);

    const files = await jpegsUnder(root);
    expect(files.map((f) => photoImageIndex(f)).sort((a, b) => a! - b!)).toEqual(
      Array.from({ length: COUNT }, (_, i) => i),
    );
    const hashes = new Set<string>();
    let bytes = 0;
    const { longSide, fixedAspect } = PHOTO_PRESETS[preset];
    for (const file of files) {
      const data = await readFile(file);
      bytes += data.length;
      hashes.add(createHash('sha256').update(data).digest('hex'));
      const { info } = await sharp(data).raw().toBuffer({ resolveWithObject: true });
      const long = Math.max(info.width, info.height);
      expect(long).toBeGreaterThanOrEqual(longSide.min);
      expect(long).toBeLessThanOrEqual(longSide.max);
      if (fixedAspect === 1) expect(info.width).toBe(info.height);
      expect(info.channels).toBe(3);
    }
    if (preset === 'small') expect(first.totalBytes).toBe(bytes);
    expect(hashes.size).toBe(COUNT);
    const mean = bytes / COUNT;
    expect(mean).toBeGreaterThan(MEAN_BAND[preset][0]);
    expect(mean).toBeLessThan(MEAN_BAND[preset][1]);

    const second = await writePhotoJpegs({ root, count: COUNT, preset, sources });
    expect(second.written).toBe(0);
    expect(second.totalBytes).toBe(bytes);
  });
});

describe('prepare photos (CLI)', () => {
  it('writes the images and says how to ingest them', { timeout: 60_000 }, async () => {
    const out = path.join(tmp, 'cli');
    const args = ['prepare', 'photos', '--preset', 'small', '--count', '6', '--out', out];
    const run = await runCli(args);
    expect(run.stderr).not.toMatch(/internal error/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      /^6 small JPEGs from \d+ photos in .* \(6 written now\), mean [\d.]+ kB$/m,
    );
    expect(run.stdout).toContain(`ingest <dataset> --image-folder ${out}`);
    expect((await jpegsUnder(out)).length).toBe(6);

    const again = await runCli(args);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('(0 written now)');

    const bad = await runCli(['prepare', 'photos', '--preset', 'huge', '--out', out]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/preset/);
  });
});
