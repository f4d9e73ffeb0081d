import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The folders of dist/ the Dockerfile's build stage removes (`rm -rf dist/...` after the
 * build), read from the Dockerfile itself, so the tests lay out what the image holds.
 */
export function prunedFromImage(): string[] {
  const text = readFileSync(path.join(repo, 'Dockerfile'), 'utf8');
  const match = /npm run build && rm -rf ((?:dist\/\S+\s*)+)/.exec(text);
  if (!match) throw new Error('the Dockerfile no longer prunes dist/ after its build');
  return match[1]!.trim().split(/\s+/);
}

/** Removes {@link prunedFromImage} from an install laid out in `work`. */
export async function pruneAsImage(work: string): Promise<void> {
  for (const rel of prunedFromImage()) await rm(path.join(work, rel), { recursive: true });
}
