import { type ListedSource, readImageFolder } from '../../core/index.js';
import { photoImageIndex } from './photoImagePath.js';

/**
 * Images 0..count-1 of a tree written by `writePhotoJpegs`, as an ImageFolder ingest source.
 * The tree may hold more images, made for a larger count by another run or benchmark.
 *
 * @internal
 */
export async function readPhotoFolder(root: string, count: number): Promise<ListedSource> {
  const source = await readImageFolder(root);
  source.entries = source.entries.filter(
    (e) => (photoImageIndex(e.filePath ?? '') ?? Infinity) < count,
  );
  return source;
}
