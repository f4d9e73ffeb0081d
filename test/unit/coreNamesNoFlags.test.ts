import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const CORE = path.resolve(import.meta.dirname, '../../src/core');

/** A flag (`--db-tls-ca`) or one of the CLI's variables (`SCYLLA_LOADER_DB_TLS_CA`). */
const FLAG_OR_VARIABLE = /(?<![\w-])--[a-z][a-z-]*|SCYLLA_LOADER_[A-Z_]*/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(file);
    return /\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [file] : [];
  });
}

/** Every string and template literal part of a source, with its line: comments do not count. */
function literals(file: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const found: { line: number; text: string }[] = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ line, text: node.text });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the core', () => {
  it('names no flag nor variable in its strings: its callers name their settings', () => {
    const files = sourceFiles(CORE);
    expect(files.length).toBeGreaterThan(100);
    const offending = files.flatMap((file) =>
      literals(file, readFileSync(file, 'utf8'))
        .filter((l) => FLAG_OR_VARIABLE.test(l.text))
        .map((l) => `${path.relative(CORE, file)}:${l.line}: ${JSON.stringify(l.text)}`),
    );
    expect(offending).toEqual([]);
  });

  it('would catch one (the scan sees literals, not comments)', () => {
    const text = [
      '// --not-this, SCYLLA_LOADER_NOR_THIS',
      "const a = 'set --db-tls-ca';",
      'const b = `${a} SCYLLA_LOADER_X`;',
      "const c = '-----BEGIN ';",
    ].join('\n');
    const seen = literals('x.ts', text).filter((l) => FLAG_OR_VARIABLE.test(l.text));
    expect(seen).toEqual([
      { line: 2, text: 'set --db-tls-ca' },
      { line: 3, text: ' SCYLLA_LOADER_X' },
    ]);
  });
});
