import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { PHOTO_PACKAGES } from './fetchPhotoPackages.js';

/** A source photograph the generator crops from. @internal */
export interface SourcePhoto {
  /** `<package>/<path inside it>`: the sort key, stable across machines. */
  name: string;
  file: string;
  width: number;
  height: number;
}

/** Where the candidate JPEGs sit inside each extracted package. */
const FOLDERS: Record<(typeof PHOTO_PACKAGES)[number], string[]> = {
  // Camera photos only: `desktop/` and `abstract/` hold art (drawn, painted, rendered).
  'mate-backgrounds': ['usr/share/backgrounds/mate/nature'],
  // The sample pictures; `opencv4/html/` (~530 JPEGs) is mostly figures and screenshots.
  'opencv-doc': ['usr/share/doc/opencv-doc/examples'],
};

/**
 * JPEGs that pass the size rule yet are no photographs: two 3D renders, an edited copy of
 * another sample (error-level-analysis demo) and a painting (Van Gogh's Starry Night).
 */
const EXCLUDED = new Set([
  'Blender_Suzanne1.jpg',
  'Blender_Suzanne2.jpg',
  'ela_modified.jpg',
  'starry_night.jpg',
]);

/** The rule: colour, shortest side at least 300 px, file at least 20 kB. @internal */
export const SOURCE_RULE = { minShortSide: 300, minBytes: 20_000, channels: 3 };

/**
 * The source photos in the extracted packages, sorted by name. With the Debian bookworm
 * versions (opencv-doc 4.6.0+dfsg-12, mate-backgrounds 1.26.0-1) that is 48: MATE's 12
 * `nature/` wallpapers (flowers, dunes, water drops, a storm) and 36 of OpenCV's 81 sample
 * JPEGs (buildings, fruit, a baboon, a squirrel, aerial shots, stereo pairs, photographed
 * scene text). {@link SOURCE_RULE} drops OpenCV's thumbnails and its grayscale chessboard
 * calibration shots and drawings; {@link EXCLUDED} the few non-photos that pass it.
 */
export async function listSourcePhotos(
  roots: Record<(typeof PHOTO_PACKAGES)[number], string>,
): Promise<SourcePhoto[]> {
  const out: SourcePhoto[] = [];
  for (const [pkg, root] of Object.entries(roots) as Array<[keyof typeof FOLDERS, string]>) {
    for (const folder of FOLDERS[pkg]) {
      for (const file of await listJpegs(path.join(root, folder))) {
        if (EXCLUDED.has(path.basename(file))) continue;
        const meta = await sharp(file).metadata();
        const bytes = (await stat(file)).size;
        if (
          meta.channels !== SOURCE_RULE.channels ||
          Math.min(meta.width, meta.height) < SOURCE_RULE.minShortSide ||
          bytes < SOURCE_RULE.minBytes
        ) {
          continue;
        }
        const name = `${pkg}/${path.relative(root, file).split(path.sep).join('/')}`;
        out.push({ name, file, width: meta.width, height: meta.height });
      }
    }
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

async function listJpegs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.jpe?g$/i.test(e.name))
    .map((e) => path.join(e.parentPath, e.name));
}
