import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { beforeAll, describe, expect, it } from 'vitest';
import type { IngestEntry } from '../../src/core/ingest/IngestEntry.js';
import type { IngestSource } from '../../src/core/ingest/IngestSource.js';
import { readWebDataset } from '../../src/core/ingest/readWebDataset.js';

type Members = Array<[name: string, body: string | Buffer]>;

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sl-webdataset-'));
});

/** The bytes of a tar holding `members`, in order. */
async function tarBytes(members: Members): Promise<Buffer> {
  const p = pack();
  for (const [name, body] of members) p.entry({ name }, body);
  p.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of p as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Writes a tar (gzipped when the name says so) into the test folder; returns its path. */
async function writeTar(name: string, members: Members): Promise<string> {
  const file = path.join(dir, name);
  const bytes = await tarBytes(members);
  await writeFile(file, /\.(tgz|gz)$/.test(name) ? gzipSync(bytes) : bytes);
  return file;
}

/** An image member's made-up bytes (the reader never decodes them). */
function image(key: string, size = 64): Buffer {
  return Buffer.alloc(size, key);
}

async function all(source: IngestSource): Promise<IngestEntry[]> {
  const out: IngestEntry[] = [];
  for await (const e of source.samples()) out.push(e);
  return out;
}

describe('readWebDataset', () => {
  it('groups consecutive members by key; .cls labels stay integers', async () => {
    const file = await writeTar('plain.tar', [
      ['000000.jpg', image('a')],
      ['000000.cls', '3\n'],
      ['000000.extra', 'ignored'],
      ['./000001.png', image('b')],
      ['./000001.cls', '0'],
      ['sub/000002.JPG', image('c')],
      ['sub/000002.cls', '7'],
      ['README', 'no extension: ignored'],
    ]);
    const source = await readWebDataset([file]);
    expect(source.description).toBe(`webdataset:${file}`);
    expect(source.labelNames).toEqual([]);
    expect(source.columns).toEqual([]);
    expect(source.total).toBe(3);
    const entries = await all(source);
    expect(entries).toEqual([
      {
        sourceKey: 'plain.tar/000000',
        origin: `${file}:000000`,
        data: image('a'),
        label: 3,
        metadata: {},
      },
      {
        sourceKey: 'plain.tar/000001',
        origin: `${file}:000001`,
        data: image('b'),
        label: 0,
        metadata: {},
      },
      {
        sourceKey: 'plain.tar/sub/000002',
        origin: `${file}:sub/000002`,
        data: image('c'),
        label: 7,
        metadata: {},
      },
    ]);
  });

  it('prefers images in a fixed order and reads a label blob', async () => {
    const file = await writeTar('prefer.tar', [
      ['k1.png', image('p')],
      ['k1.jpg', image('j')],
      ['k1.cls', '1'],
      ['k2.png', image('x')],
      ['k2.seg.png', image('s')],
      ['k3.webp', image('w')],
      ['k3.labelblob', Buffer.from([1, 2, 3])],
      ['k3.label', '2'],
    ]);
    const entries = await all(await readWebDataset([file]));
    expect(entries.map((e) => [e.data, e.label, e.labelBlob, e.error])).toEqual([
      [image('j'), 1, undefined, undefined],
      [image('x'), null, image('s'), undefined],
      [image('w'), 2, Buffer.from([1, 2, 3]), undefined],
    ]);
  });

  it('makes class names of non-integer labels (.label, .cls), sorted and numbered', async () => {
    const file = await writeTar('names.tar', [
      ['a.jpg', image('a')],
      ['a.label', ' dog \n'],
      ['b.jpg', image('b')],
      ['b.label', 'cat'],
      ['c.jpg', image('c')],
      ['c.cls', '3'],
      ['d.jpg', image('d')],
      ['d.cls', 'cat'],
    ]);
    const source = await readWebDataset([file]);
    expect(source.labelNames).toEqual(['3', 'cat', 'dog']);
    expect((await all(source)).map((e) => e.label)).toEqual([2, 1, 0, 1]);
  });

  it('reads the label from a .json field and the other scalar fields as metadata', async () => {
    const json = (v: object): string => JSON.stringify(v);
    const file = await writeTar('meta.tar', [
      ['s0.jpg', image('0')],
      [
        's0.json',
        json({
          label: 'b',
          width: 10,
          score: 0.5,
          ok: true,
          big: 2 ** 40,
          note: 'x',
          tags: [1, 2],
          nested: { a: 1 },
        }),
      ],
      ['s1.jpg', image('1')],
      ['s1.json', json({ label: 'a', width: 12, score: 1, ok: false, big: 1, note: 7 })],
      ['s2.jpg', image('2')],
      ['s2.json', json({ label: 'b', width: 11 })],
      ['s3.jpg', image('3')],
      ['s3.cls', 'a'], // the .cls member comes before the field
      ['s3.json', json({ label: 'ignored', width: 1 })],
    ]);
    const source = await readWebDataset([file]);
    expect(source.labelNames).toEqual(['a', 'b']);
    expect(source.columns).toEqual([
      { name: 'big', type: 'bigint' },
      { name: 'note', type: 'text' },
      { name: 'ok', type: 'boolean' },
      { name: 'score', type: 'double' },
      { name: 'width', type: 'int' },
    ]);
    const entries = await all(source);
    expect(entries.map((e) => e.label)).toEqual([1, 0, 1, 0]);
    expect(entries[0]!.metadata).toEqual({
      big: 2n ** 40n,
      note: 'x',
      ok: true,
      score: 0.5,
      width: 10,
    });
    expect(entries[1]!.metadata).toEqual({ big: 1n, note: '7', ok: false, score: 1, width: 12 });
    expect(entries[2]!.metadata).toEqual({
      big: null,
      note: null,
      ok: null,
      score: null,
      width: 11,
    });

    const declared = await readWebDataset([file], { declaredTypes: { width: 'text' } });
    expect(declared.columns).toContainEqual({ name: 'width', type: 'text' });
    expect((await all(declared))[0]!.metadata['width']).toBe('10');
    await expect(readWebDataset([file], { declaredTypes: { nope: 'int' } })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(/declared column nope/),
    });

    // Another label field: "label" is then a metadata column, named apart from the built-in.
    const byWidth = await readWebDataset([file], { labelField: 'width' });
    expect(byWidth.columns).toContainEqual({ name: 'src_label', type: 'text' });
    expect((await all(byWidth))[0]!.metadata).toMatchObject({ src_label: 'b' });
    const custom = await writeTar('custom.tar', [
      ['u.jpg', image('u')],
      ['u.json', json({ y: 5, z: 'q' })],
    ]);
    const other = await readWebDataset([custom], { labelField: 'y' });
    expect(other.columns).toEqual([{ name: 'z', type: 'text' }]);
    expect((await all(other))[0]).toMatchObject({ label: 5, metadata: { z: 'q' } });
  });

  it('reads shards where no sample has a label as unlabelled (LAION-style jpg + txt + json)', async () => {
    const file = await writeTar('laion.tar', [
      ['000.jpg', image('a')],
      ['000.txt', 'a dog on a beach'],
      ['000.json', JSON.stringify({ width: 640, similarity: 0.31 })],
      ['001.jpg', image('b')],
      ['001.txt', 'a cat'],
      ['001.json', JSON.stringify({ width: 320, similarity: 0.28 })],
    ]);
    const source = await readWebDataset([file]);
    expect(source.unlabelled).toBe(
      'no sample has a .cls or .label member, a .json field "label" or a label blob member ' +
        '(labelField <name> names another field)',
    );
    expect(source.labelNames).toEqual([]);
    expect((await all(source)).map((e) => [e.sourceKey, e.label, e.metadata, e.error])).toEqual([
      ['laion.tar/000', null, { similarity: 0.31, txt: 'a dog on a beach', width: 640 }, undefined],
      ['laion.tar/001', null, { similarity: 0.28, txt: 'a cat', width: 320 }, undefined],
    ]);
    // One label blob anywhere makes the dataset labelled: the others are then bad samples.
    const masked = await writeTar('masked.tar', [
      ['000.jpg', image('a')],
      ['001.jpg', image('b')],
      ['001.mask.png', image('m')],
    ]);
    const labelled = await readWebDataset([masked]);
    expect(labelled.unlabelled).toBeUndefined();
    expect((await all(labelled)).map((e) => e.error !== undefined)).toEqual([true, false]);
    // Unless labels are ignored: then every sample is stored without label or blob.
    const ignored = await readWebDataset([masked], { ignoreLabels: true });
    expect(ignored.unlabelled).toBe('labels ignored (ignoreLabels)');
    expect((await all(ignored)).map((e) => [e.label, e.labelBlob, e.error])).toEqual([
      [null, undefined, undefined],
      [null, undefined, undefined],
    ]);
  });

  it('reads a .txt member as the caption, metadata column txt, not as a label', async () => {
    const file = await writeTar('captions.tar', [
      ['000.jpg', image('a')],
      ['000.txt', 'a dog on a beach\n'],
      ['000.cls', '4'],
      ['000.json', JSON.stringify({ width: 640 })],
      ['001.jpg', image('b')],
      ['001.txt', '12'], // still text: a caption is never inferred as a number
      ['001.cls', '1'],
      ['002.jpg', image('c')],
      ['002.cls', '0'], // no caption: null
      ['003.jpg', image('d')],
      ['003.txt', 'a caption and no label'],
    ]);
    const source = await readWebDataset([file]);
    expect(source.labelNames).toEqual([]);
    expect(source.columns).toEqual([
      { name: 'txt', type: 'text' },
      { name: 'width', type: 'int' },
    ]);
    const entries = await all(source);
    expect(entries.map((e) => [e.label, e.metadata, e.error])).toEqual([
      [4, { txt: 'a dog on a beach\n', width: 640 }, undefined],
      [1, { txt: '12', width: null }, undefined],
      [0, { txt: null, width: null }, undefined],
      [
        null,
        {},
        'no label (a .cls or .label member, or a field "label" of the .json member) and no ' +
          'label blob, though other samples have one (shards where no sample has a label ' +
          'ingest as an unlabelled dataset)',
      ],
    ]);

    const declared = await readWebDataset([file], { declaredTypes: { txt: 'text' } });
    expect(declared.columns).toContainEqual({ name: 'txt', type: 'text' });

    // A .json field called txt as well: refused, naming both.
    const both = await writeTar('captions-both.tar', [
      ['x.jpg', image('x')],
      ['x.txt', 'a caption'],
      ['x.cls', '1'],
      ['y.jpg', image('y')],
      ['y.cls', '1'],
      ['y.json', JSON.stringify({ txt: 'another caption' })],
    ]);
    await expect(readWebDataset([both])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message:
        `.txt members (captions, first ${both}:x.txt) and the .json field "txt" (first in ` +
        `${both}:y.json) would both be metadata column txt; a dataset may have one or the other`,
    });
    // Also when the field only maps to txt.
    const mapped = await writeTar('captions-mapped.tar', [
      ['x.jpg', image('x')],
      ['x.json', JSON.stringify({ label: 1, TXT: 'another caption' })],
      ['y.jpg', image('y')],
      ['y.txt', 'a caption'],
      ['y.cls', '1'],
    ]);
    await expect(readWebDataset([mapped])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(
        `.txt members (captions, first ${mapped}:y.txt) and the .json field "TXT" (first in ` +
          `${mapped}:x.json) would both be metadata column txt`,
      ),
    });
  });

  it('maps .json field names to column names (NSFW -> nsfw); declared types use them', async () => {
    const file = await writeTar('laion.tar', [
      ['x.jpg', image('x')],
      ['x.cls', '1'],
      [
        'x.json',
        JSON.stringify({
          NSFW: 'UNLIKELY',
          LICENSE: '?',
          'original-width': 640,
          'caption.en': 'a dog',
          id: 17,
          // An own field called __proto__, as JSON.parse makes it (an object literal cannot).
        }).replace(/}$/, ',"__proto__":"p"}'),
      ],
      ['y.jpg', image('y')],
      ['y.cls', '0'],
      ['y.json', JSON.stringify({ 'original-width': 480 })],
    ]);
    const source = await readWebDataset([file], { declaredTypes: { original_width: 'bigint' } });
    expect(source.columns).toEqual([
      { name: 'caption_en', type: 'text' },
      { name: 'license', type: 'text' },
      { name: 'nsfw', type: 'text' },
      { name: 'original_width', type: 'bigint' },
      { name: 'proto', type: 'text' },
      { name: 'src_id', type: 'int' },
    ]);
    const entries = await all(source);
    expect(entries.map((e) => e.metadata)).toEqual([
      {
        caption_en: 'a dog',
        license: '?',
        nsfw: 'UNLIKELY',
        original_width: 640n,
        proto: 'p',
        src_id: 17,
      },
      {
        caption_en: null,
        license: null,
        nsfw: null,
        original_width: 480n,
        proto: null,
        src_id: null,
      },
    ]);
    // A declared type names the column, not the field.
    await expect(
      readWebDataset([file], { declaredTypes: { 'original-width': 'int' } }),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message:
        'declared column original-width: the .json field original-width is metadata column ' +
        'original_width; declare original_width',
    });
  });

  it('refuses .json fields that map to no column name or to the same one, naming them', async () => {
    const file = await writeTar('clash.tar', [
      ['x.jpg', image('x')],
      ['x.json', JSON.stringify({ label: 1, NSFW: 'a' })],
      ['y.jpg', image('y')],
      ['y.json', JSON.stringify({ label: 1, nsfw: 'b' })],
    ]);
    await expect(readWebDataset([file])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringMatching(
        new RegExp(
          `^\\.json field "NSFW" \\(first in ${file}:x\\.json\\) and \\.json field "nsfw" ` +
            `\\(first in ${file}:y\\.json\\) both map to metadata column nsfw; a field's column ` +
            'name is its name in lower case',
        ),
      ),
    });
    const none = await writeTar('noname.tar', [
      ['x.jpg', image('x')],
      ['x.json', JSON.stringify({ label: 1, '%%': 2 })],
    ]);
    await expect(readWebDataset([none])).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: expect.stringContaining(
        `.json field "%%" (first in ${none}:x.json) maps to no column name`,
      ),
    });
  });

  it('expands brace patterns (zero padding kept) and refuses a missing file by name', async () => {
    for (let i = 0; i < 3; i++) {
      await writeTar(`shard-00000${i}.tar`, [
        [`k${i}.png`, image(String(i))],
        [`k${i}.cls`, String(i)],
      ]);
    }
    const source = await readWebDataset([path.join(dir, 'shard-{000000..000002}.tar')]);
    expect(source.description).toBe(`webdataset:${path.join(dir, 'shard-000000.tar')}(+2 more)`);
    expect((await all(source)).map((e) => e.sourceKey)).toEqual([
      'shard-000000.tar/k0',
      'shard-000001.tar/k1',
      'shard-000002.tar/k2',
    ]);
    const missing = path.join(dir, 'shard-000003.tar');
    await expect(
      readWebDataset([path.join(dir, 'shard-{000000..000003}.tar')]),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: `WebDataset file ${missing} does not exist`,
    });
    await expect(
      readWebDataset([path.join(dir, 'shard-000000.tar'), path.join(dir, 'shard-000000.tar')]),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: /given twice/ });
  });

  it('reads gzipped tars (.tar.gz and .tgz)', async () => {
    const members: Members = [
      ['g.jpg', image('g', 5000)],
      ['g.cls', '4'],
    ];
    const a = await writeTar('zipped.tar.gz', members);
    const b = await writeTar('zipped2.tgz', members);
    const entries = await all(await readWebDataset([a, b]));
    expect(entries.map((e) => [e.sourceKey, e.data, e.label])).toEqual([
      ['zipped.tar.gz/g', image('g', 5000), 4],
      ['zipped2.tgz/g', image('g', 5000), 4],
    ]);
  });

  it('yields the samples before damage, one error entry, then goes on with the next file', async () => {
    const members: Members = [];
    for (let i = 0; i < 5; i++) {
      members.push([`g${i}.jpg`, image(String(i), 3000)], [`g${i}.cls`, String(i)]);
    }
    const bytes = await tarBytes(members);
    // Each member: a 512-byte header, its body padded to 512 bytes (3000 -> 3072, "1" -> 512).
    const g3Image = 3 * (512 + 3072 + 512 + 512);
    const cut = path.join(dir, 'cut.tar');
    await writeFile(cut, bytes.subarray(0, g3Image + 512 + 1000));
    const cutGz = path.join(dir, 'cut.tar.gz');
    const gz = gzipSync(bytes);
    await writeFile(cutGz, gz.subarray(0, Math.floor(gz.length * 0.7)));
    const after = await writeTar('after.tar', [
      ['z.jpg', image('z')],
      ['z.cls', '9'],
    ]);

    const source = await readWebDataset([cut, after]);
    expect(source.total).toBe(5); // 3 samples, the damage, the next file's sample
    const entries = await all(source);
    expect(entries.map((e) => [e.sourceKey, e.label, e.error])).toEqual([
      ['cut.tar/g0', 0, undefined],
      ['cut.tar/g1', 1, undefined],
      ['cut.tar/g2', 2, undefined],
      [
        'cut.tar/g3',
        null,
        `${cut} is damaged in the members of g3: Unexpected end of data; ` +
          'the rest of this file is skipped',
      ],
      ['after.tar/z', 9, undefined],
    ]);
    expect(entries[2]!.data).toEqual(image('2', 3000));

    const zipped = await all(await readWebDataset([cutGz]));
    const damaged = zipped.filter((e) => e.error !== undefined);
    expect(damaged).toHaveLength(1);
    expect(damaged[0]!.error).toMatch(
      new RegExp(`^${cutGz} is damaged .*: unexpected end of file`),
    );
    expect(zipped.at(-1)).toBe(damaged[0]);
    expect(zipped.slice(0, -1).every((e) => e.error === undefined)).toBe(true);

    const notTar = path.join(dir, 'not.tar');
    await writeFile(notTar, Buffer.alloc(2048, 'x'));
    const [bad] = await all(await readWebDataset([notTar]));
    expect(bad!.error).toMatch(/is damaged before its first member: Invalid tar header/);
  });

  it('reports a group without an image, without a label, a repeated key, a bad .json', async () => {
    const file = await writeTar('bad.tar', [
      ['ok.jpg', image('o')],
      ['ok.cls', '1'],
      ['noimage.cls', '1'],
      ['noimage.json', '{}'],
      ['nolabel.png', image('n')],
      ['ok.cls', '2'], // the key ok again, apart from its group
      ['badjson.jpg', image('j')],
      ['badjson.json', '{"label":'],
      ['twice.jpg', image('t')],
      ['twice.jpg', image('t')],
      ['twice.cls', '0'],
      ['fine.png', image('f')],
      ['fine.json', '{"label": 0}'],
    ]);
    const source = await readWebDataset([file]);
    expect(source.total).toBe(7);
    const entries = await all(source);
    expect(entries.map((e) => [e.sourceKey, e.error?.replace(/:.*/s, '')])).toEqual([
      ['bad.tar/ok', undefined],
      ['bad.tar/noimage', expect.stringMatching(/^no image member \(\.jpg, \.jpeg, \.png/)],
      ['bad.tar/nolabel', expect.stringMatching(/^no label/)],
      ['bad.tar/ok', 'member key repeated'],
      ['bad.tar/badjson', 'malformed .json member'],
      ['bad.tar/twice', 'member twice.jpg appears twice'],
      ['bad.tar/fine', undefined],
    ]);
    for (const e of entries.filter((x) => x.error)) {
      expect(e).toMatchObject({ label: null, metadata: {} });
      expect(e.data).toBeUndefined();
    }
  });

  it('shards partition the samples: each group (and each damage) in exactly one of n', async () => {
    const files: string[] = [];
    for (const [i, count] of [5, 7, 4].entries()) {
      const members: Members = [];
      for (let k = 0; k < count; k++) {
        members.push([`f${i}k${k}.jpg`, image(`${i}${k}`)]);
        // One class only in the last file: every shard must still know it.
        members.push([`f${i}k${k}.cls`, i === 2 && k === 3 ? 'zebra' : `c${k % 2}`]);
      }
      if (i === 1) members.push(['nolabel.jpg', image('n')]);
      files.push(await writeTar(`part-${i}.tar`, members));
    }
    const whole = await tarBytes([
      ['d0.jpg', image('d', 2000)],
      ['d0.cls', 'c0'],
      ['d1.jpg', image('e', 2000)],
    ]);
    const damaged = path.join(dir, 'part-3.tar');
    await writeFile(damaged, whole.subarray(0, whole.length - 1500));
    files.push(damaged);

    const show = (e: IngestEntry): string => `${e.sourceKey} ${e.label} ${e.error ?? ''}`;
    const unsharded = await readWebDataset(files);
    const expected = (await all(unsharded)).map(show).sort();
    expect(expected).toHaveLength(5 + 7 + 1 + 4 + 2); // with the no-label group, d0, the damage
    expect(unsharded.labelNames).toEqual(['c0', 'c1', 'zebra']);

    // 2 and 4 split by file (4 files), 5 and 7 by member group.
    for (const count of [1, 2, 4, 5, 7]) {
      const got: string[] = [];
      let total = 0;
      for (let index = 0; index < count; index++) {
        const source = await readWebDataset(files, { shard: { index, count } });
        expect(source.labelNames).toEqual(unsharded.labelNames);
        expect(source.columns).toEqual(unsharded.columns);
        const entries = await all(source);
        expect(entries).toHaveLength(source.total!);
        total += source.total!;
        got.push(...entries.map(show));
      }
      expect(got.sort()).toEqual(expected);
      expect(total).toBe(expected.length);
    }
    const byFile = await all(await readWebDataset(files, { shard: { index: 1, count: 2 } }));
    expect(new Set(byFile.map((e) => e.sourceKey.split('/')[0]))).toEqual(
      new Set(['part-1.tar', 'part-3.tar']),
    );
  });

  it('stops reading when the consumer stops, and reads again on the next call', async () => {
    const members: Members = [];
    for (let k = 0; k < 50; k++)
      members.push([`m${k}.jpg`, image('m', 20_000)], [`m${k}.cls`, '1']);
    const file = await writeTar('many.tar', members);
    const source = await readWebDataset([file]);
    for await (const first of source.samples()) {
      expect(first.sourceKey).toBe('many.tar/m0');
      break;
    }
    expect(await all(source)).toHaveLength(50);
    expect((await readFile(file)).length).toBeGreaterThan(50 * 20_000);
  });
});
