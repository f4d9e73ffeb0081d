import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command, CommanderError } from 'commander';
import { parquetWriteFile } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { registerIngestCommand, openIngestSource } from '../../src/cli/commands/ingest.js';
import type { IngestFlags } from '../../src/cli/commands/ingestFlags.js';
import { ingestFlagOf } from '../../src/cli/commands/ingestFormatOptions.js';
import {
  INGEST_FORMATS,
  type IngestEntry,
  type IngestSource,
  LoaderError,
  ingestFormat,
  openIngestFormat,
} from '../../src/core/index.js';

/** `scylla-loader ingest` as the CLI registers it, with errors thrown instead of exiting. */
function ingestCommand(): Command {
  const program = new Command().exitOverride();
  registerIngestCommand(program);
  const cmd = program.commands.find((c) => c.name() === 'ingest')!;
  cmd.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  return cmd;
}

async function userError(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LoaderError);
  expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
  return (err as LoaderError).message;
}

async function entriesOf(source: IngestSource): Promise<IngestEntry[]> {
  const out: IngestEntry[] = [];
  for await (const e of source.samples()) out.push(e);
  return out;
}

/** A manifest of `n` rows in a new folder (the files need not exist to be listed). */
async function manifest(n: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-formats-'));
  const file = path.join(dir, 'm.csv');
  const rows = Array.from({ length: n }, (_, i) => `img${i}.png,${i % 3},${i * 10}`);
  await writeFile(file, `path,label,x\n${rows.join('\n')}\n`);
  return file;
}

/** A Parquet file of `n` rows (two binary columns, so the image column must be named), 2 per row group. */
async function parquet(n: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-formats-'));
  const file = path.join(dir, 'p.parquet');
  const bytes = Array.from({ length: n }, (_, i) => new Uint8Array([i + 1]));
  parquetWriteFile({
    filename: file,
    columnData: [
      { name: 'left', data: bytes as never },
      { name: 'right', data: bytes as never },
      { name: 'label', data: Array.from({ length: n }, (_, i) => i % 2) as never },
    ],
    schema: [
      { name: 'root', num_children: 3 },
      { name: 'left', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
      { name: 'right', type: 'BYTE_ARRAY', repetition_type: 'OPTIONAL' },
      { name: 'label', type: 'INT32', repetition_type: 'OPTIONAL' },
    ] as never,
    rowGroupSize: 2,
  });
  return file;
}

describe('ingest formats registry', () => {
  it('lists the four formats ingest reads today', () => {
    expect(INGEST_FORMATS.map((f) => f.name)).toEqual([
      'imagefolder',
      'manifest',
      'webdataset',
      'parquet',
    ]);
  });

  it("makes ingest's flags: every format's input and options are in ingest --help", () => {
    const help = ingestCommand().helpInformation();
    for (const format of INGEST_FORMATS) {
      expect(help).toContain(format.title);
      for (const option of [format.input, ...format.options]) {
        const flag = `${ingestFlagOf(option.name)} ${option.value}`;
        expect(help, `${format.name}: ${flag}`).toContain(flag);
        // Help wraps long descriptions: compare its words.
        const words = help.replace(/\s+/g, ' ');
        expect(words).toContain(option.description);
      }
    }
    // The flags the manual documents are the registry's.
    for (const flag of ['--image-folder <root>', '--manifest <file>', '--root <dir>']) {
      expect(help).toContain(flag);
    }
    for (const flag of ['--webdataset <tar...>', '--label-field <name>', '--parquet <file...>']) {
      expect(help).toContain(flag);
    }
    for (const flag of [
      '--image-column',
      '--label-column',
      '--key-column',
      '--label-blob-column',
    ]) {
      expect(help).toContain(`${flag} <name>`);
    }
  });

  it('parses each format option under its name, the one the format reads', () => {
    const cmd = ingestCommand();
    cmd.action(() => {});
    cmd.parse(
      ['ds', '--parquet', 'a.parquet', 'b.parquet', '--image-column', 'img', '--label-field', 'y'],
      { from: 'user' },
    );
    expect(cmd.opts()).toMatchObject({
      parquet: ['a.parquet', 'b.parquet'],
      imageColumn: 'img',
      labelField: 'y',
    });
  });

  it('an unknown format is a clear error: to the CLI an unknown flag, to a library its name', async () => {
    const cmd = ingestCommand();
    cmd.action(() => {});
    expect(() => cmd.parse(['ds', '--tfrecord', 'x'], { from: 'user' })).toThrow(CommanderError);
    expect(() => cmd.parse(['ds', '--tfrecord', 'x'], { from: 'user' })).toThrow(
      /unknown option '--tfrecord'/,
    );
    expect(await userError(openIngestFormat('tfrecord', 'x'))).toBe(
      'unknown ingest format "tfrecord"; the formats are imagefolder, manifest, webdataset, parquet',
    );
    expect(() => ingestFormat('Parquet')).toThrow(/unknown ingest format "Parquet"/);
  });

  it('asks for exactly one source, naming every format flag', async () => {
    const flags = { column: [] } as unknown as IngestFlags;
    const expected =
      'give exactly one source: --image-folder <root>, --manifest <file>, ' +
      '--webdataset <tar...> or --parquet <file...>';
    expect(await userError(openIngestSource(flags))).toBe(expected);
    expect(await userError(openIngestSource({ ...flags, manifest: 'a', imageFolder: 'b' }))).toBe(
      expected,
    );
  });

  it('refuses an option the format does not take, named as the caller names it', async () => {
    const file = await manifest(2);
    expect(
      await userError(openIngestFormat('manifest', file, { options: { keyColumn: 'k' } })),
    ).toBe('format manifest takes no option keyColumn; its options: root');
    expect(
      await userError(
        openIngestFormat('manifest', file, {
          options: { keyColumn: 'k' },
          nameOption: ingestFlagOf,
        }),
      ),
    ).toBe('format manifest takes no option --key-column; its options: --root');
    expect(await userError(openIngestFormat('manifest', [file, file]))).toBe(
      'manifest takes one <file>, not 2',
    );
  });

  it('shards a listed format by entries, the same through the CLI and the library', async () => {
    const file = await manifest(7);
    const whole = await entriesOf(await openIngestFormat('manifest', file));
    expect(whole).toHaveLength(7);
    const parts = await Promise.all(
      [0, 1, 2].map(async (index) =>
        entriesOf(await openIngestFormat('manifest', file, { shard: { index, count: 3 } })),
      ),
    );
    expect(parts.map((p) => p.length)).toEqual([3, 2, 2]);
    expect(
      parts
        .flat()
        .map((e) => e.sourceKey)
        .sort(),
    ).toEqual(whole.map((e) => e.sourceKey).sort());
    const viaCli = await openIngestSource({
      manifest: file,
      shard: '1/3',
      column: ['x:text'],
    } as unknown as IngestFlags);
    expect((await entriesOf(viaCli)).map((e) => e.sourceKey)).toEqual(
      parts[1]!.map((e) => e.sourceKey),
    );
    // --column reached the format: x is text, not the inferred int.
    expect(viaCli.columns).toEqual([{ name: 'x', type: 'text' }]);
  });

  it('names the shard setting as the caller does', async () => {
    const file = await manifest(1);
    const flags = { manifest: file, shard: '3/3', column: [] } as unknown as IngestFlags;
    expect(await userError(openIngestSource(flags))).toMatch(/^--shard 3\/3: use i\/n/);
    const { parseShard } = await import('../../src/core/index.js');
    expect(() => parseShard('3/3')).toThrow(/^shard 3\/3: use i\/n/);
  });

  it('passes a format its own options and shard, and its messages name them as the caller does', async () => {
    const file = await parquet(5);
    // Two binary columns: the format asks for the image column, by flag under the CLI.
    const flags = { parquet: [file], column: [] } as unknown as IngestFlags;
    expect(await userError(openIngestSource(flags))).toMatch(
      /\(left, right\); pass --image-column <name>$/,
    );
    expect(await userError(openIngestFormat('parquet', file))).toMatch(
      /\(left, right\); pass imageColumn <name>$/,
    );
    // Row groups of 2 rows: shard 0 of 2 has groups 0 and 2 (rows 0, 1, 4), shard 1 group 1.
    const keys = async (shard: string): Promise<string[]> =>
      (
        await entriesOf(
          await openIngestSource({ ...flags, imageColumn: 'right', shard } as IngestFlags),
        )
      ).map((e) => e.sourceKey);
    expect(await keys('0/2')).toEqual(['p.parquet:0', 'p.parquet:1', 'p.parquet:4']);
    expect(await keys('1/2')).toEqual(['p.parquet:2', 'p.parquet:3']);
    const right = await entriesOf(
      await openIngestFormat('parquet', [file], { options: { imageColumn: 'right' } }),
    );
    expect(right.map((e) => e.data![0])).toEqual([1, 2, 3, 4, 5]);
  });

  it('--ignore-labels reads every format as unlabelled, and refuses a label option beside it', async () => {
    const name = { nameOption: ingestFlagOf, ignoreLabels: true } as const;
    const fromManifest = await openIngestFormat('manifest', await manifest(3), name);
    expect(fromManifest.unlabelled).toBe('labels ignored (--ignore-labels)');
    expect(fromManifest.labelNames).toEqual([]);
    expect((await entriesOf(fromManifest)).map((e) => [e.label, e.labelBlobPath])).toEqual([
      [null, undefined],
      [null, undefined],
      [null, undefined],
    ]);
    const file = await parquet(3);
    const fromParquet = await openIngestFormat('parquet', file, {
      ...name,
      options: { imageColumn: 'right' },
    });
    expect(fromParquet.unlabelled).toBe('labels ignored (--ignore-labels)');
    // The label column is kept, as metadata.
    expect(fromParquet.columns).toEqual([{ name: 'src_label', type: 'int' }]);
    expect((await entriesOf(fromParquet)).map((e) => [e.label, e.metadata])).toEqual([
      [null, { src_label: 0 }],
      [null, { src_label: 1 }],
      [null, { src_label: 0 }],
    ]);
    // A nested tree of folders that are not classes: every file, at any depth, no label.
    const root = await mkdtemp(path.join(os.tmpdir(), 'sl-formats-'));
    await mkdir(path.join(root, 'part-0', 'deep'), { recursive: true });
    await writeFile(path.join(root, 'part-0', 'a.jpg'), 'a');
    await writeFile(path.join(root, 'part-0', 'deep', 'b.jpg'), 'b');
    await writeFile(path.join(root, 'c.jpg'), 'c');
    const tree = await openIngestFormat('imagefolder', root, name);
    expect(tree.labelNames).toEqual([]);
    expect((await entriesOf(tree)).map((e) => [e.sourceKey, e.label])).toEqual([
      ['c.jpg', null],
      ['part-0/a.jpg', null],
      ['part-0/deep/b.jpg', null],
    ]);
    expect(
      await userError(
        openIngestFormat('parquet', file, { ...name, options: { labelColumn: 'label' } }),
      ),
    ).toBe(
      'give --ignore-labels or --label-column, not both: --ignore-labels stores every sample ' +
        'without a label',
    );
  });
});
