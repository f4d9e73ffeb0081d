import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { invalidArgument, notFound } from '../errors/LoaderError.js';
import type { IngestEntry } from './IngestEntry.js';
import { listedSource, type ListedSource } from './IngestSource.js';

/**
 * Reads an ImageFolder tree, `root/<class>/<file>` (files may sit deeper under a class
 * folder). Class names are sorted and numbered from 0, as torchvision's ImageFolder does, and
 * each sample's source key is its root-relative POSIX path. Hidden files and folders are
 * ignored.
 */
export async function readImageFolder(root: string): Promise<ListedSource> {
  const abs = path.resolve(root);
  const rootStat = await stat(abs).catch(() => null);
  if (!rootStat) throw notFound(`ImageFolder root ${abs} does not exist`);
  if (!rootStat.isDirectory()) throw invalidArgument(`ImageFolder root ${abs} is not a folder`);

  const top = await readdir(abs, { withFileTypes: true });
  const classes = top
    .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
    .map((d) => d.name)
    .sort();
  if (classes.length === 0) {
    throw invalidArgument(
      `ImageFolder root ${abs} has no class folders; expected ${abs}/<class>/<file>`,
    );
  }

  const entries: IngestEntry[] = [];
  for (const [label, cls] of classes.entries()) {
    for (const file of await listFiles(path.join(abs, cls))) {
      const sourceKey = path.relative(abs, file).split(path.sep).join('/');
      entries.push({ sourceKey, filePath: file, label, metadata: {}, origin: file });
    }
  }
  return listedSource({
    description: `imagefolder:${abs}`,
    entries,
    labelNames: classes,
    columns: [],
  });
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const items = await readdir(dir, { withFileTypes: true });
  items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const item of items) {
    if (item.name.startsWith('.')) continue;
    const full = path.join(dir, item.name);
    if (item.isDirectory()) out.push(...(await listFiles(full)));
    else if (item.isFile() || item.isSymbolicLink()) out.push(full);
  }
  return out;
}
