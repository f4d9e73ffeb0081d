import { execFileSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LoaderError } from '../../src/core/index.js';
import { replaceMarkedBlock } from '../../scripts/docs/markedBlock.js';

/** The names of the tables the performance page takes from the benchmarks. */
export const DOC_TABLES = [
  'suite-targets',
  'stream',
  'grouped-reads',
  'mixing',
  'columns',
  'ledger-imagenet',
  'ledger-small',
  'latency',
  'cache',
  'concurrency',
  'scale',
  'cores',
  'ceiling',
  'transform',
  'tls',
  'faults',
  'ingest',
  'splits',
  'robustness',
  'soak',
] as const;

/** One of {@link DOC_TABLES}. */
export type DocTableName = (typeof DOC_TABLES)[number];

/** Where and how a table was measured: the line above it. */
export interface Measured {
  date: Date;
  /** The command line that measured it. */
  command: string;
  /** Short commit hash of the checkout. */
  commit: string;
  /** CPU model, cores, memory, Node version. */
  machine: string;
}

/** This run's {@link Measured}: now, this process's command line, the checkout, this machine. */
export function measuredHere(command = benchCommandLine()): Measured {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    // A figure of code that was never committed must say so.
    const changes = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      encoding: 'utf8',
    });
    if (changes.trim() !== '') commit += ' with uncommitted changes';
  } catch {
    // Not a checkout (an installed package): the line says so.
  }
  const cpu = os.cpus()[0]?.model.trim() ?? 'unknown CPU';
  const memory = Math.round(os.totalmem() / 2 ** 30);
  return {
    date: new Date(),
    command,
    commit,
    machine: `${cpu}, ${os.availableParallelism()} cores, ${memory} GiB, Node ${process.version}`,
  };
}

/** `npm run bench -- ...` as this process was started. */
export function benchCommandLine(): string {
  return ['npm run bench --', ...process.argv.slice(2)].join(' ');
}

/**
 * Refuses `--docs` into a file of the checkout while the checkout has uncommitted changes: a
 * table in the docs must come from a committed state, named by its commit. The docs file itself
 * may differ (an earlier `--docs` run wrote it), and untracked files do not count; anything else
 * changed is FAILED_PRECONDITION naming the files. A file outside the checkout (a scratch
 * page) is not the docs: no check.
 */
export function assertCommittedTree(docsFile: string, cwd = process.cwd()): void {
  const git = (...args: string[]): string => execFileSync('git', args, { cwd, encoding: 'utf8' });
  const root = git('rev-parse', '--show-toplevel').trim();
  const docs = path.relative(root, path.resolve(cwd, docsFile));
  if (docs.startsWith('..') || path.isAbsolute(docs)) return;
  const dirty = git('status', '--porcelain', '--untracked-files=no')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => line.slice(3).split(' -> ').at(-1)!)
    .filter((file) => file !== docs);
  if (dirty.length === 0) return;
  throw new LoaderError(
    'FAILED_PRECONDITION',
    `--docs writes tables only from a committed tree; commit or stash these first: ${dirty.join(', ')}`,
  );
}

/** The measured line and the table, as they go between the markers. */
export function docBlock(table: string, measured: Measured): string {
  const day = measured.date.toISOString().slice(0, 10);
  return (
    `Measured ${day} by \`${measured.command}\` at commit ${measured.commit} on ` +
    `${measured.machine}.\n\n${table.trimEnd()}\n`
  );
}

/**
 * `markdown` with the lines between `<!-- bench:NAME:begin -->` and `<!-- bench:NAME:end -->`
 * replaced by `block`; everything else is kept byte for byte. Missing, repeated or
 * misordered markers are INVALID_ARGUMENT naming them.
 */
export function replaceBetweenMarkers(markdown: string, name: string, block: string): string {
  return replaceMarkedBlock(markdown, `bench:${name}`, block);
}

/**
 * Writes each table under its name into the Markdown file `file`, with the line saying when,
 * by what command, at which commit and on what machine it was measured. All markers are
 * checked before the file is written, so a missing one leaves the file as it was.
 */
export async function writeDocTables(
  file: string,
  tables: Partial<Record<DocTableName, string>>,
  measured: Measured = measuredHere(),
): Promise<void> {
  let markdown = await readFile(file, 'utf8');
  for (const [name, table] of Object.entries(tables)) {
    if (table !== undefined)
      markdown = replaceBetweenMarkers(markdown, name, docBlock(table, measured));
  }
  await writeFile(file, markdown);
}

/** Only the Markdown tables of a report (its lines starting with `|`), a blank line apart. */
export function markdownTables(markdown: string): string {
  const blocks: string[][] = [];
  let open = false;
  for (const line of markdown.split('\n')) {
    const inTable = line.startsWith('|');
    if (inTable && !open) blocks.push([]);
    if (inTable) blocks.at(-1)!.push(line);
    open = inTable;
  }
  return `${blocks.map((b) => b.join('\n')).join('\n\n')}\n`;
}

/**
 * Prints a bench's Markdown report and, when `docs` names a Markdown file, writes its tables
 * (those of `docsMarkdown`, when only a part of the report goes there) under `name` (the
 * `--docs` flag of every bench whose figures the docs cite).
 */
export async function printReport(
  markdown: string,
  docs: string | undefined,
  name: DocTableName,
  docsMarkdown: string = markdown,
): Promise<void> {
  process.stdout.write(markdown);
  if (docs === undefined) return;
  await writeDocTables(docs, { [name]: markdownTables(docsMarkdown) });
  process.stdout.write(`tables: ${docs} (bench:${name})\n`);
}
