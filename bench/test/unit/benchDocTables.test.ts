import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import {
  assertCommittedTree,
  docBlock,
  measuredHere,
  replaceBetweenMarkers,
  writeDocTables,
  type Measured,
} from '../../report/docTables.js';

const measured: Measured = {
  date: new Date('2026-11-22T10:00:00Z'),
  command: 'npm run bench -- ceiling --docs docs/performance.md',
  commit: 'abc1234',
  machine: 'AMD EPYC, 2 cores, 24 GiB, Node v20.20.0',
};

const page = [
  '# Performance',
  '',
  'Some prose  with  odd spacing.\t',
  '<!-- bench:ceiling:begin -->',
  'old table',
  'old line',
  '<!-- bench:ceiling:end -->',
  'After, kept as it is.',
  '<!-- bench:tls:begin -->',
  '<!-- bench:tls:end -->',
  '',
].join('\n');

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('docBlock', () => {
  it('is the measured line, a blank line and the table', () => {
    expect(docBlock('| a |\n|---|\n| 1 |\n\n', measured)).toBe(
      'Measured 2026-11-22 by `npm run bench -- ceiling --docs docs/performance.md` ' +
        'at commit abc1234 on AMD EPYC, 2 cores, 24 GiB, Node v20.20.0.\n\n| a |\n|---|\n| 1 |\n',
    );
  });

  it('describes this machine and checkout', () => {
    const here = measuredHere('npm run bench -- x');
    expect(here.machine).toMatch(/, \d+ cores, \d+ GiB, Node v\d+/);
    expect(here.commit).toMatch(/^([0-9a-f]{4,}( with uncommitted changes)?|unknown)$/);
  });
});

describe('replaceBetweenMarkers', () => {
  it('replaces only the lines between the markers and keeps the rest byte for byte', () => {
    const out = replaceBetweenMarkers(page, 'ceiling', 'new\n');
    expect(out).toBe(page.replace('old table\nold line\n', 'new\n'));
    const tls = replaceBetweenMarkers(out, 'tls', 'T\n');
    expect(tls).toBe(out.replace('<!-- bench:tls:begin -->\n', '<!-- bench:tls:begin -->\nT\n'));
  });

  it('is idempotent: writing the same block twice gives the same page', () => {
    const once = replaceBetweenMarkers(page, 'ceiling', docBlock('| x |', measured));
    expect(replaceBetweenMarkers(once, 'ceiling', docBlock('| x |', measured))).toBe(once);
  });

  it('keeps Windows line ends', () => {
    const crlf = page.replace(/\n/g, '\r\n');
    const out = replaceBetweenMarkers(crlf, 'ceiling', 'a\nb\n');
    expect(out).toBe(crlf.replace('old table\r\nold line\r\n', 'a\r\nb\r\n'));
  });

  it('fails clearly on missing, repeated or misordered markers', () => {
    expect(() => replaceBetweenMarkers(page, 'stream', 'x\n')).toThrow(
      /<!-- bench:stream:begin --> must be on a line of its own exactly once, found 0 times/,
    );
    const twice = `${page}<!-- bench:ceiling:end -->\n`;
    expect(() => replaceBetweenMarkers(twice, 'ceiling', 'x\n')).toThrow(/found 2 times/);
    const swapped = '<!-- bench:a:end -->\n<!-- bench:a:begin -->\n';
    expect(() => replaceBetweenMarkers(swapped, 'a', 'x\n')).toThrow(/comes before/);
    // A marker inside a line of prose is not a marker.
    expect(() =>
      replaceBetweenMarkers('see <!-- bench:a:begin -->\n<!-- bench:a:end -->\n', 'a', 'x\n'),
    ).toThrow(/bench:a:begin/);
  });
});

describe('writeDocTables', () => {
  it('writes every table, or nothing when a marker is missing', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sl-doc-tables-'));
    const file = path.join(dir, 'performance.md');
    await writeFile(file, page);
    await writeDocTables(file, { ceiling: '| c |', tls: '| t |' }, measured);
    const written = await readFile(file, 'utf8');
    expect(written).toContain(`<!-- bench:ceiling:begin -->\n${docBlock('| c |', measured)}<!--`);
    expect(written).toContain(`<!-- bench:tls:begin -->\n${docBlock('| t |', measured)}<!--`);
    await expect(writeDocTables(file, { tls: '| 2 |', stream: '| s |' }, measured)).rejects.toThrow(
      /bench:stream:begin/,
    );
    expect(await readFile(file, 'utf8')).toBe(written);
  });
});

describe('assertCommittedTree', () => {
  it('lets --docs run in a committed tree and refuses, naming them, changed files', async () => {
    const repo = await mkdtemp(path.join(os.tmpdir(), 'sl-docs-tree-'));
    try {
      const git = (...args: string[]): string =>
        execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
          cwd: repo,
          encoding: 'utf8',
        });
      git('init', '-q');
      await writeFile(path.join(repo, 'code.ts'), 'one\n');
      await writeFile(path.join(repo, 'perf.md'), 'page\n');
      git('add', '.');
      git('commit', '-q', '-m', 'c');
      expect(() => assertCommittedTree('perf.md', repo)).not.toThrow();
      // The docs file an earlier --docs run wrote, and untracked files, do not count.
      await writeFile(path.join(repo, 'perf.md'), 'page with a table\n');
      await writeFile(path.join(repo, 'scratch.txt'), 'x\n');
      expect(() => assertCommittedTree(path.join(repo, 'perf.md'), repo)).not.toThrow();
      await writeFile(path.join(repo, 'code.ts'), 'two\n');
      expect(() => assertCommittedTree('perf.md', repo)).toThrow(
        expect.objectContaining({
          code: 'FAILED_PRECONDITION',
          message: expect.stringMatching(/committed tree.*: code\.ts$/),
        }),
      );
      git('add', 'code.ts');
      expect(() => assertCommittedTree('perf.md', repo)).toThrow(/code\.ts/);
      // A page outside the checkout is not its docs.
      expect(() => assertCommittedTree(path.join(os.tmpdir(), 'page.md'), repo)).not.toThrow();
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });
});
