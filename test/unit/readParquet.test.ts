import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { type ColumnMetaData, type FileMetaData, parquetMetadata } from 'hyparquet';
import { ByteWriter, parquetWriteFile } from 'hyparquet-writer';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LoaderError } from '../../src/core/errors/LoaderError.js';
import type { IngestEntry } from '../../src/core/ingest/IngestEntry.js';
import type { IngestSource } from '../../src/core/ingest/IngestSource.js';
import { readParquet } from '../../src/core/ingest/readParquet.js';
import { ingestFlagOf } from '../../src/cli/commands/ingestFormatOptions.js';

/** A schema element as hyparquet-writer takes it. */
interface Element {
  name: string;
  type?: 'BOOLEAN' | 'INT32' | 'INT64' | 'FLOAT' | 'DOUBLE' | 'BYTE_ARRAY';
  repetition_type?: 'REQUIRED' | 'OPTIONAL' | 'REPEATED';
  converted_type?: 'UTF8' | 'LIST';
  num_children?: number;
}

/** A column to write: its values and its schema elements (the column's own first). */
interface Column {
  data: unknown[];
  schema: Element[];
}

const leaf =
  (type: Element['type'], converted?: Element['converted_type']) =>
  (name: string): Element[] => [
    {
      name,
      type,
      repetition_type: 'OPTIONAL',
      ...(converted ? { converted_type: converted } : {}),
    },
  ];
const binary = leaf('BYTE_ARRAY');
const string = leaf('BYTE_ARRAY', 'UTF8');
const int32 = leaf('INT32');
const int64 = leaf('INT64');
const float = leaf('FLOAT');
const double = leaf('DOUBLE');
const boolean = leaf('BOOLEAN');
/** Hugging Face's Image feature: a struct {bytes: binary, path: string}. */
const imageStruct = (name: string): Element[] => [
  { name, repetition_type: 'OPTIONAL', num_children: 2 },
  ...binary('bytes'),
  ...string('path'),
];
const int32List = (name: string): Element[] => [
  { name, repetition_type: 'OPTIONAL', converted_type: 'LIST', num_children: 1 },
  { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
  ...int32('element'),
];

async function tmp(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'sl-parquet-'));
}

/** Writes a Parquet file with hyparquet-writer; `rowGroupSize` rows per row group. */
function writeParquet(
  file: string,
  columns: Record<string, Column>,
  options: {
    rowGroupSize?: number;
    kv?: Record<string, string>;
    codec?: 'SNAPPY' | 'GZIP' | 'BROTLI';
  } = {},
): string {
  const names = Object.keys(columns);
  parquetWriteFile({
    filename: file,
    columnData: names.map((name) => ({ name, data: columns[name]!.data as never })),
    schema: [
      { name: 'root', num_children: names.length },
      ...names.flatMap((name) => columns[name]!.schema),
    ] as never,
    rowGroupSize: options.rowGroupSize ?? 1000,
    kvMetadata: Object.entries(options.kv ?? {}).map(([key, value]) => ({ key, value })),
    codec: options.codec ?? 'SNAPPY',
    compressors: {
      GZIP: (bytes: Uint8Array) => new Uint8Array(gzipSync(bytes)),
      BROTLI: (bytes: Uint8Array) => new Uint8Array(brotliCompressSync(bytes)),
    },
  });
  return file;
}

/** A fake image: distinct bytes per row. */
function image(i: number, size = 16): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.fill(i % 251);
  bytes[0] = 0x89;
  return bytes;
}

/**
 * The file with its footer re-encoded after `patch` changed it: a footer such as a damaged or
 * hostile writer could leave, which hyparquet-writer would never write.
 */
function withFooter(file: Buffer, patch: (metadata: FileMetaData) => void): Buffer {
  const metadata = parquetMetadata(file);
  patch(metadata);
  const writer = new ByteWriter();
  writeMetadata(writer, metadata);
  writer.appendBytes(Buffer.from('PAR1'));
  const footerStart = file.length - 8 - metadata.metadata_length;
  return Buffer.concat([file.subarray(0, footerStart), Buffer.from(writer.getBytes())]);
}

async function collect(source: IngestSource): Promise<IngestEntry[]> {
  const out: IngestEntry[] = [];
  for await (const entry of source.samples()) out.push(entry);
  return out;
}

async function invalidArgument(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LoaderError);
  expect((err as LoaderError).code).toBe('INVALID_ARGUMENT');
  return (err as LoaderError).message;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('readParquet', () => {
  it('reads a binary image column with integer labels', async () => {
    const file = writeParquet(path.join(await tmp(), 'train.parquet'), {
      img: { data: [0, 1, 2].map((i) => image(i)), schema: binary('img') },
      label: { data: [3, 0, 7], schema: int32('label') },
    });
    const source = await readParquet([file]);
    expect(source.description).toBe(`parquet:${file}`);
    expect(source.labelNames).toEqual([]);
    expect(source.columns).toEqual([]);
    expect(source.total).toBe(3);
    const entries = await collect(source);
    expect(entries.map((e) => e.label)).toEqual([3, 0, 7]);
    expect(entries.map((e) => e.sourceKey)).toEqual([
      'train.parquet:0',
      'train.parquet:1',
      'train.parquet:2',
    ]);
    expect(entries[2]!.origin).toBe(`${file}:row 2`);
    expect(Buffer.isBuffer(entries[1]!.data)).toBe(true);
    expect(entries[1]!.data!.equals(Buffer.from(image(1)))).toBe(true);
    expect(entries.every((e) => e.error === undefined)).toBe(true);
  });

  it('reads gzip and brotli compressed files, besides snappy', async () => {
    const dir = await tmp();
    for (const codec of ['GZIP', 'BROTLI'] as const) {
      const file = writeParquet(
        path.join(dir, `${codec}.parquet`),
        {
          image: { data: [0, 1, 2].map((i) => image(i, 300)), schema: binary('image') },
          label: { data: [1, 2, 3], schema: int32('label') },
          note: { data: ['a', 'b', 'c'], schema: string('note') },
        },
        { codec },
      );
      const meta = parquetMetadata(await readFile(file));
      expect(meta.row_groups[0]!.columns[0]!.meta_data!.codec).toBe(codec);
      const entries = await collect(await readParquet([file]));
      expect(entries.map((e) => [e.label, e.metadata['note']])).toEqual([
        [1, 'a'],
        [2, 'b'],
        [3, 'c'],
      ]);
      expect(entries[2]!.data!.equals(Buffer.from(image(2, 300)))).toBe(true);
    }
  });

  it('numbers string labels by their sorted names, over every file and every shard', async () => {
    const dir = await tmp();
    const a = writeParquet(path.join(dir, 'a.parquet'), {
      image: { data: [0, 1, 2].map((i) => image(i)), schema: binary('image') },
      class: { data: ['zebra', 'cat', 'zebra'], schema: string('class') },
    });
    const b = writeParquet(path.join(dir, 'b.parquet'), {
      image: { data: [3, 4].map((i) => image(i)), schema: binary('image') },
      class: { data: ['dog', null], schema: string('class') },
    });
    const source = await readParquet([a, b]);
    expect(source.description).toBe(`parquet:${a} (+1 more)`);
    expect(source.labelNames).toEqual(['cat', 'dog', 'zebra']);
    const entries = await collect(source);
    expect(entries.map((e) => e.label)).toEqual([2, 0, 2, 1, null]);
    expect(entries[4]!.error).toBe('label column class is null');
    // The second file alone is the second shard, yet every class is numbered alike.
    const shard = await readParquet([a, b], { shard: { index: 1, count: 2 } });
    expect(shard.labelNames).toEqual(['cat', 'dog', 'zebra']);
    expect(shard.total).toBe(2);
    expect((await collect(shard)).map((e) => e.label)).toEqual([1, null]);
  });

  it("reads Hugging Face's {bytes, path} image struct and ClassLabel names from the metadata", async () => {
    const names = ['airplane', 'bird', 'cat'];
    const features = {
      image: { _type: 'Image' },
      label: { names, _type: 'ClassLabel' },
      // A second binary column: the Image marking still picks `image`.
      thumbnail: { dtype: 'binary', _type: 'Value' },
    };
    const file = writeParquet(
      path.join(await tmp(), 'train-00000-of-00001.parquet'),
      {
        image: {
          data: [0, 1, 2, 3].map((i) => ({ bytes: image(i), path: `${i}.png` })),
          schema: imageStruct('image'),
        },
        thumbnail: { data: [0, 1, 2, 3].map((i) => image(i, 4)), schema: binary('thumbnail') },
        label: { data: [2n, 0n, 1n, 2n], schema: int64('label') },
      },
      { kv: { huggingface: JSON.stringify({ info: { features } }) } },
    );
    const source = await readParquet([file]);
    expect(source.labelNames).toEqual(names);
    expect(source.columns).toEqual([]);
    const entries = await collect(source);
    expect(entries.map((e) => e.label)).toEqual([2, 0, 1, 2]);
    expect(entries.map((e) => e.data!.equals(Buffer.from(image(entries.indexOf(e)))))).toEqual([
      true,
      true,
      true,
      true,
    ]);
  });

  it('maps scalar columns to metadata types, ignores lists, and converts declared types', async () => {
    const file = writeParquet(path.join(await tmp(), 'm.parquet'), {
      image: { data: [image(0), image(1)], schema: binary('image') },
      label: { data: [0, 1], schema: int32('label') },
      slide: { data: [3, null], schema: int32('slide') },
      big: { data: [2n ** 40n, -5n], schema: int64('big') },
      small: { data: [7n, 8n], schema: int64('small') },
      ratio: { data: [0.5, 1.5], schema: float('ratio') },
      score: { data: [0.25, -1e300], schema: double('score') },
      patient: { data: ['p1', 'p2'], schema: string('patient') },
      stained: { data: [true, false], schema: boolean('stained') },
      tags: { data: [[1, 2], []], schema: int32List('tags') },
    });
    const source = await readParquet([file], { declaredTypes: { small: 'int', slide: 'text' } });
    expect(source.columns).toEqual([
      { name: 'big', type: 'bigint' },
      { name: 'patient', type: 'text' },
      { name: 'ratio', type: 'double' },
      { name: 'score', type: 'double' },
      { name: 'slide', type: 'text' },
      { name: 'small', type: 'int' },
      { name: 'stained', type: 'boolean' },
    ]);
    const entries = await collect(source);
    expect(entries[0]!.metadata).toEqual({
      big: 2n ** 40n,
      patient: 'p1',
      ratio: 0.5,
      score: 0.25,
      slide: '3',
      small: 7,
      stained: true,
    });
    expect(entries[1]!.metadata).toMatchObject({ big: -5n, slide: null, stained: false });

    const declaredMissing = await invalidArgument(
      readParquet([file], { declaredTypes: { nope: 'int' } }),
    );
    expect(declaredMissing).toBe(
      `declaredTypes nope:int: ${file} has no metadata column nope; its metadata columns: big, ` +
        'patient, ratio, score, slide, small, stained',
    );
    expect(await invalidArgument(readParquet([file], { declaredTypes: { tags: 'int' } }))).toBe(
      `declaredTypes tags:int: tags is not a metadata column of ${file} (a list)`,
    );
    // The CLI names its flag instead, through nameOption.
    const asFlags = { declaredTypes: { tags: 'int' as const }, nameOption: ingestFlagOf };
    expect(await invalidArgument(readParquet([file], asFlags))).toBe(
      `--column tags:int: tags is not a metadata column of ${file} (a list)`,
    );
  });

  it('maps column names to metadata column names (NSFW -> nsfw); declared types use them', async () => {
    const dir = await tmp();
    const file = writeParquet(path.join(dir, 'laion.parquet'), {
      image: { data: [image(0), image(1)], schema: binary('image') },
      label: { data: [0, 1], schema: int32('label') },
      NSFW: { data: ['UNLIKELY', 'NSFW'], schema: string('NSFW') },
      'caption.en': { data: ['a dog', null], schema: string('caption.en') },
      'original-width': { data: [640, 480], schema: int32('original-width') },
      'Patient ID': { data: ['p1', 'p2'], schema: string('Patient ID') },
      id: { data: [7n, 8n], schema: int64('id') },
    });
    const source = await readParquet([file], { declaredTypes: { original_width: 'text' } });
    expect(source.columns).toEqual([
      { name: 'caption_en', type: 'text' },
      { name: 'nsfw', type: 'text' },
      { name: 'original_width', type: 'text' },
      { name: 'patient_id', type: 'text' },
      { name: 'src_id', type: 'bigint' },
    ]);
    const entries = await collect(source);
    expect(entries.map((e) => e.metadata)).toEqual([
      {
        caption_en: 'a dog',
        nsfw: 'UNLIKELY',
        original_width: '640',
        patient_id: 'p1',
        src_id: 7n,
      },
      { caption_en: null, nsfw: 'NSFW', original_width: '480', patient_id: 'p2', src_id: 8n },
    ]);
    // A declared type names the metadata column, not the Parquet column.
    expect(await invalidArgument(readParquet([file], { declaredTypes: { NSFW: 'boolean' } }))).toBe(
      `declaredTypes NSFW:boolean: column NSFW of ${file} is metadata column nsfw; declare nsfw`,
    );

    const clash = writeParquet(path.join(dir, 'clash.parquet'), {
      image: { data: [image(0)], schema: binary('image') },
      label: { data: [0], schema: int32('label') },
      'Caption.EN': { data: ['x'], schema: string('Caption.EN') },
      caption_en: { data: ['y'], schema: string('caption_en') },
      '%%': { data: [1], schema: int32('%%') },
    });
    const msg = await invalidArgument(readParquet([clash]));
    expect(msg).toContain(
      `${clash}: column "%%" maps to no column name (it has no letter or digit); column ` +
        '"Caption.EN" and column "caption_en" both map to metadata column caption_en',
    );
    expect(msg).toMatch(/rename the column/);
  });

  it('takes source keys from a key column, which must be unique', async () => {
    const dir = await tmp();
    const file = writeParquet(path.join(dir, 'k.parquet'), {
      id: { data: ['img-a', 'img-b', null], schema: string('id') },
      image: { data: [0, 1, 2].map((i) => image(i)), schema: binary('image') },
      label: { data: [0, 1, 0], schema: int32('label') },
    });
    const entries = await collect(await readParquet([file], { keyColumn: 'id' }));
    expect(entries.map((e) => e.sourceKey)).toEqual(['img-a', 'img-b', 'k.parquet:2']);
    expect(entries[2]!.error).toBe('key column id is null');
    // The key column is no metadata column; without --key-column, `id` is column src_id (not
    // the built-in id).
    expect((await readParquet([file], { keyColumn: 'id' })).columns).toEqual([]);
    const unkeyed = await readParquet([file]);
    expect(unkeyed.columns).toEqual([{ name: 'src_id', type: 'text' }]);
    expect((await collect(unkeyed))[1]!.metadata).toEqual({ src_id: 'img-b' });

    const twice = writeParquet(path.join(dir, 'twice.parquet'), {
      key: { data: [1n, 2n, 1n], schema: int64('key') },
      image: { data: [0, 1, 2].map((i) => image(i)), schema: binary('image') },
      label: { data: [0, 1, 0], schema: int32('label') },
    });
    const msg = await invalidArgument(readParquet([twice], { keyColumn: 'key' }));
    expect(msg).toContain('repeats "1"');
    expect(msg).toContain(`${twice}:row 0`);
    expect(msg).toContain(`${twice}:row 2`);
  });

  it('shards by row group: each row in exactly one of n shards', async () => {
    const dir = await tmp();
    const rows = (n: number, from: number): Record<string, Column> => ({
      image: {
        data: Array.from({ length: n }, (_, i) => image(from + i)),
        schema: binary('image'),
      },
      label: { data: Array.from({ length: n }, (_, i) => (from + i) % 3), schema: int32('label') },
    });
    const files = [
      writeParquet(path.join(dir, 'p0.parquet'), rows(23, 0), { rowGroupSize: 5 }),
      writeParquet(path.join(dir, 'p1.parquet'), rows(11, 23), { rowGroupSize: 4 }),
    ];
    const all = (await collect(await readParquet(files))).map((e) => e.sourceKey);
    expect(all).toHaveLength(34);
    for (const count of [1, 2, 3, 4, 16]) {
      const seen: string[] = [];
      let total = 0;
      for (let index = 0; index < count; index++) {
        const source = await readParquet(files, { shard: { index, count } });
        total += source.total ?? 0;
        const keys = (await collect(source)).map((e) => e.sourceKey);
        expect(keys).toHaveLength(source.total!);
        seen.push(...keys);
      }
      expect(total).toBe(34);
      expect([...seen].sort()).toEqual([...all].sort());
    }
    // Row groups are dealt out whole, by their ordinal over all files (5 + 3 groups).
    const first = await collect(await readParquet(files, { shard: { index: 0, count: 3 } }));
    expect(first.map((e) => e.sourceKey)).toEqual(
      [0, 1, 2, 3, 4, 15, 16, 17, 18, 19]
        .map((r) => `p0.parquet:${r}`)
        .concat([0, 1, 2, 3].map((r) => `p1.parquet:${r + 4}`)),
    );
  });

  it('yields an error entry for a row with a null image, and the other rows', async () => {
    const dir = await tmp();
    const file = writeParquet(path.join(dir, 'holes.parquet'), {
      image: {
        data: [
          { bytes: image(0), path: 'a.png' },
          null,
          { bytes: null, path: 'c.png' },
          {
            bytes: image(3),
            path: 'd.png',
          },
        ],
        schema: imageStruct('image'),
      },
      label: { data: [0, 1, 1, null], schema: int32('label') },
    });
    const entries = await collect(await readParquet([file]));
    expect(entries.map((e) => e.error)).toEqual([
      undefined,
      'image column image is null',
      'image column image has no bytes (only a path, c.png, which is not read)',
      'label column label is null',
    ]);
    expect(entries[0]!.data!.equals(Buffer.from(image(0)))).toBe(true);
    expect(entries.map((e) => e.origin)).toEqual([0, 1, 2, 3].map((r) => `${file}:row ${r}`));
  });

  it('reports a row group that fails to decode as one error entry and reads on', async () => {
    const file = writeParquet(
      path.join(await tmp(), 'corrupt.parquet'),
      {
        image: { data: [0, 1, 2, 3, 4, 5].map((i) => image(i, 64)), schema: binary('image') },
        label: { data: [0, 1, 2, 0, 1, 2], schema: int32('label') },
      },
      { rowGroupSize: 2 },
    );
    const bytes = await readFile(file);
    const metadata = parquetMetadata(bytes);
    // Garble the page header of row group 1's image column.
    const at = Number(metadata.row_groups[1]!.columns[0]!.meta_data!.data_page_offset);
    bytes.fill(0xff, at, at + 12);
    await writeFile(file, bytes);
    const entries = await collect(await readParquet([file]));
    expect(entries).toHaveLength(5);
    expect(entries.map((e) => e.label)).toEqual([0, 1, null, 1, 2]);
    expect(entries[2]!.error).toMatch(
      new RegExp(`^row group 1 \\(rows 2 to 3\\) of ${file} could not be decoded: .+`),
    );
    expect(entries[2]!.origin).toBe(`${file}:row group 1`);
  });

  it('refuses a file that is not Parquet, naming it', async () => {
    const file = path.join(await tmp(), 'notes.parquet');
    await writeFile(file, 'this is not a parquet file at all');
    const msg = await invalidArgument(readParquet([file]));
    expect(msg).toContain(file);
    expect(msg).toMatch(/not a Parquet file/);
  });

  it('refuses a footer claiming a chunk past the end of the file, before allocating it', async () => {
    const dir = await tmp();
    const made = writeParquet(path.join(dir, 'made.parquet'), {
      image: { data: [0, 1, 2].map((i) => image(i, 64)), schema: binary('image') },
      label: { data: [0, 1, 2], schema: int32('label') },
    });
    const original = await readFile(made);
    const handle = await open(made, 'r');
    const proto = Object.getPrototypeOf(handle) as { read: (...args: unknown[]) => unknown };
    await handle.close();
    const cases: [string, (m: ColumnMetaData) => void, RegExp][] = [
      [
        'huge.parquet',
        // 1 PiB: hyparquet would ask for a buffer of that length.
        (m) => (m.total_compressed_size = 2n ** 50n),
        /column image of row group 0 claims its pages at bytes 4 to 1125899906842628, beyond the \d+ bytes before the file's footer \(file size \d+\)/,
      ],
      [
        'far.parquet',
        (m) => (m.data_page_offset = 2n ** 40n),
        /column image of row group 0 claims its pages at bytes 1099511627776 to /,
      ],
      [
        'negative.parquet',
        (m) => (m.total_compressed_size = -5n),
        /column image of row group 0 has an invalid pages \(offset 4, length -5\)/,
      ],
    ];
    for (const [name, patch, expected] of cases) {
      const file = path.join(dir, name);
      await writeFile(
        file,
        withFooter(original, (m) => patch(m.row_groups[0]!.columns[0]!.meta_data!)),
      );
      const read = vi.spyOn(proto, 'read');
      const msg = await invalidArgument(readParquet([file]));
      expect(msg, name).toMatch(expected);
      expect(msg, name).toContain(`Parquet file ${file}: `);
      // Only the footer was read, and nothing larger than the file was asked for.
      const size = (await readFile(file)).length;
      for (const args of read.mock.calls) expect(Number(args[2])).toBeLessThanOrEqual(size);
      read.mockRestore();
    }
  });

  it('asks for the image or label column when it cannot tell, by the name the caller gives', async () => {
    const dir = await tmp();
    const two = writeParquet(path.join(dir, 'two.parquet'), {
      left: { data: [image(0)], schema: binary('left') },
      right: { data: [image(1)], schema: binary('right') },
      label: { data: [0], schema: int32('label') },
    });
    const msg = await invalidArgument(readParquet([two]));
    expect(msg).toMatch(/left, right\); pass imageColumn <name>$/);
    const cli = await invalidArgument(readParquet([two], { nameOption: ingestFlagOf }));
    expect(cli).toMatch(/left, right\); pass --image-column <name>$/);
    const right = await collect(await readParquet([two], { imageColumn: 'right' }));
    expect(right[0]!.data!.equals(Buffer.from(image(1)))).toBe(true);

    const unlabelled = writeParquet(path.join(dir, 'unlabelled.parquet'), {
      image: { data: [image(0)], schema: binary('image') },
      category: { data: ['x'], schema: string('category') },
    });
    // No label column: unlabelled, and the reason says how to name one.
    const plain = await readParquet([unlabelled]);
    expect(plain.unlabelled).toBe(
      `${unlabelled} has no label column (looked for label, labels, class, target; ` +
        'labelColumn <name> names another)',
    );
    expect((await collect(plain)).map((e) => [e.label, e.error, e.metadata])).toEqual([
      [null, undefined, { category: 'x' }],
    ]);
    const cliNamed = await readParquet([unlabelled], { nameOption: ingestFlagOf });
    expect(cliNamed.unlabelled).toMatch(/--label-column <name> names another\)$/);
    expect(await invalidArgument(readParquet([unlabelled], { labelColumn: 'nope' }))).toMatch(
      /labelColumn nope: .* has no such column/,
    );
    const byName = await readParquet([unlabelled], { labelColumn: 'category' });
    expect(byName.labelNames).toEqual(['x']);
  });

  it('reads a label blob column, and needs no label column with one', async () => {
    const file = writeParquet(path.join(await tmp(), 'masks.parquet'), {
      image: { data: [image(0), image(1)], schema: binary('image') },
      mask: { data: [image(9, 8), null], schema: binary('mask') },
    });
    const entries = await collect(await readParquet([file], { labelBlobColumn: 'mask' }));
    expect(entries[0]).toMatchObject({ label: null });
    expect(entries[0]!.labelBlob!.equals(Buffer.from(image(9, 8)))).toBe(true);
    expect(entries[1]!.error).toBe('label blob column mask is null');
  });

  it('refuses files whose schemas differ, naming both', async () => {
    const dir = await tmp();
    const a = writeParquet(path.join(dir, 'a.parquet'), {
      image: { data: [image(0)], schema: binary('image') },
      label: { data: [0], schema: int32('label') },
    });
    const b = writeParquet(path.join(dir, 'b.parquet'), {
      image: { data: [image(0)], schema: binary('image') },
      label: { data: ['cat'], schema: string('label') },
    });
    const msg = await invalidArgument(readParquet([a, b]));
    expect(msg).toContain(a);
    expect(msg).toContain(b);
    expect(msg).toMatch(/column label is INT32 in .* but BYTE_ARRAY\/UTF8/);
  });

  it('reads one row group at a time, not the whole file', async () => {
    const groups = 12;
    const perGroup = 10;
    const size = 8192;
    const n = groups * perGroup;
    const file = writeParquet(
      path.join(await tmp(), 'big.parquet'),
      {
        // Random bytes do not compress: each row group is about perGroup * size bytes.
        image: {
          data: Array.from({ length: n }, () => randomBytes(size)),
          schema: binary('image'),
        },
        label: { data: Array.from({ length: n }, (_, i) => i % 5), schema: int32('label') },
      },
      { rowGroupSize: perGroup },
    );
    const fileBytes = (await readFile(file)).length;
    const source = await readParquet([file]);

    const handle = await open(file, 'r');
    const proto = Object.getPrototypeOf(handle) as { read: (...args: unknown[]) => unknown };
    await handle.close();
    const read = vi.spyOn(proto, 'read');
    const bytesRead = (): number =>
      read.mock.calls.reduce((sum, args) => sum + Number(args[2] ?? 0), 0);

    const it = source.samples()[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value?.sourceKey).toBe('big.parquet:0');
    // The group being yielded and the one read ahead, nothing more.
    const groupBytes = perGroup * size;
    expect(bytesRead()).toBeGreaterThan(groupBytes);
    expect(bytesRead()).toBeLessThan(2.5 * groupBytes);
    expect(bytesRead()).toBeLessThan(fileBytes / 4);

    let count = 1;
    for (let r = await it.next(); !r.done; r = await it.next()) {
      count++;
      if (count === 5 * perGroup + 1) {
        expect(bytesRead()).toBeLessThan(7.5 * groupBytes);
      }
    }
    expect(count).toBe(n);
    expect(bytesRead()).toBeGreaterThan(groups * groupBytes);
    expect(bytesRead()).toBeLessThan(fileBytes);
  });
});
