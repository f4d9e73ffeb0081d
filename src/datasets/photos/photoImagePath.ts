import path from 'node:path';

/**
 * Path of image `index` in the generator's ImageFolder tree:
 * `root/photo_<source>/img_<index>.jpg`, one class per source photo.
 *
 * @internal
 */
export function photoImagePath(root: string, index: number, source: number): string {
  return path.join(
    root,
    `photo_${String(source).padStart(3, '0')}`,
    `img_${String(index).padStart(6, '0')}.jpg`,
  );
}

/**
 * The index of a file named by {@link photoImagePath}, or undefined for another name.
 *
 * @internal
 */
export function photoImageIndex(file: string): number | undefined {
  const m = /^img_(\d+)\.jpg$/.exec(path.basename(file));
  return m ? Number(m[1]) : undefined;
}
