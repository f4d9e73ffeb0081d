import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { invalidArgument, notFound } from '../errors/LoaderError.js';
import type { IngestEntry } from './IngestEntry.js';
import { listedSource, type ListedSource } from './IngestSource.js';

/**
 * Reads an ImageFolder tree, `root/<class>/<file>` (files may sit deeper under a class
 * folder). Class names are sorted and numbered from 0, as torchvision's ImageFolder does, and
 * each sample's source key is its root-relative POSIX path. Hidden files and folders are
 * ignored. A root with files and no folder at all is an unlabelled dataset: each file is a
 * sample without a label; so is every file at any depth with `ignoreLabels`. A root with class folders ignores files beside them, as
 * torchvision's ImageFolder does.
 */
export async function readImageFolder(
  root: string,
  options: {
    /** Read every file at any depth as a sample without a label; names the setting asking it. */
    ignoreLabels?: string;
  } = {},
): Promise<ListedSource> {
  const abs = path.resolve(root);
  const rootStat = await stat(abs).catch(() => null);
  if (!rootStat) throw notFound(`ImageFolder root ${abs} does not exist`);
  if (!rootStat.isDirectory()) throw invalidArgument(`ImageFolder root ${abs} is not a folder`);

  const top = await readdir(abs, { withFileTypes: true });
  const classes = top
    .filter((d) => d.isDirectory() && !d.name.startsWith('.'))
    .map((d) => d.name)
    .sort();
  const entry = (file: string, label: number | null): IngestEntry => ({
    sourceKey: path.relative(abs, file).split(path.sep).join('/'),
    filePath: file,
    label,
    metadata: {},
    origin: file,
  });
  if (classes.length === 0 || options.ignoreLabels !== undefined) {
    const files = await listFiles(abs);
    if (files.length === 0) {
      throw invalidArgument(
        `ImageFolder root ${abs} has neither class folders nor files; expected ` +
          `${abs}/<class>/<file> (labelled) or ${abs}/<file> (unlabelled)`,
      );
    }
    return listedSource({
      description: `imagefolder:${abs}`,
      entries: files.map((file) => entry(file, null)),
      labelNames: [],
      columns: [],
      unlabelled:
        options.ignoreLabels !== undefined
          ? `labels ignored (${options.ignoreLabels})`
          : `${abs} has files and no class folders`,
    });
  }

  const entries: IngestEntry[] = [];
  for (const [label, cls] of classes.entries()) {
    for (const file of await listFiles(path.join(abs, cls))) entries.push(entry(file, label));
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
