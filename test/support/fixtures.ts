import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';

/**
 * Writes `count` distinct JPEG images of `width`x`height` into `dir`, made from smooth gradients
 * with a per-image phase so each one differs and compresses like a picture, not like noise.
 */
export async function writeJpegs(
  dir: string,
  count: number,
  width = 64,
  height = 64,
): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const files: string[] = [];
  for (let n = 0; n < count; n++) {
    const pixels = Buffer.alloc(width * height * 3);
    for (let y = 0; y < height; y++) {
      for (let x = 0; x < width; x++) {
        const o = (y * width + x) * 3;
        pixels[o] = (x * 4 + n * 17) & 255;
        pixels[o + 1] = (y * 3 + n * 29) & 255;
        pixels[o + 2] = ((x + y) * 2 + n * 7) & 255;
      }
    }
    const file = path.join(dir, `img_${String(n).padStart(4, '0')}.jpg`);
    await sharp(pixels, { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 85 })
      .toFile(file);
    files.push(file);
  }
  return files;
}

/** Writes a file whose name says JPEG but whose bytes are not an image. */
export async function writeCorruptJpeg(file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, Buffer.from('this is not a jpeg at all'));
}
