import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const bench = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const repo = path.dirname(bench);
/** The product's public entries the benchmarks may import; everything else of src/ is private. */
const ENTRIES = [
  'cli',
  'client',
  'core',
  'datasets',
  'datasets/photos',
  'devdb',
  'proto',
  'server',
  'testing',
].map((folder) => `src/${folder}/index.ts`);

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tsFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

describe('the benchmarks import the product', () => {
  it('through its index entries only, and the fault harness through test/faults/index.ts', () => {
    const deep: string[] = [];
    for (const file of tsFiles(bench)) {
      const source = readFileSync(file, 'utf8');
      for (const [, spec] of source.matchAll(/(?:from|import\(?)\s*'(\.[^']+)'/g)) {
        const target = path
          .relative(repo, path.resolve(path.dirname(file), spec!))
          .replace(/\.js$/, '.ts');
        const allowed =
          (!target.startsWith('src/') && !target.startsWith('test/faults/')) ||
          ENTRIES.includes(target) ||
          target === 'test/faults/index.ts';
        if (!allowed) deep.push(`${path.relative(repo, file)}: ${spec}`);
      }
    }
    expect(deep).toEqual([]);
    // The scan did read the benchmarks, and every entry it allows exists.
    expect(tsFiles(bench).length).toBeGreaterThan(100);
    for (const entry of ENTRIES) expect(() => readFileSync(path.join(repo, entry))).not.toThrow();
  });
});
