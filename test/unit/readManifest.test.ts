import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readImageFolder } from '../../src/core/ingest/readImageFolder.js';
import { readManifest } from '../../src/core/ingest/readManifest.js';

async function tmp(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'sl-manifest-'));
}

describe('readManifest', () => {
  it('reads CSV with inferred and declared metadata types', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'm.csv');
    await writeFile(
      file,
      'path,label,patient_id,slide,x,y,score\n' +
        'a.png,1,p001,3,10,20,0.5\n' +
        'b.png,0,p002,4,11,21,\n',
    );
    const src = await readManifest(file, { declaredTypes: { slide: 'text' } });
    expect(src.columns).toEqual([
      { name: 'patient_id', type: 'text' },
      { name: 'score', type: 'double' },
      { name: 'slide', type: 'text' },
      { name: 'x', type: 'int' },
      { name: 'y', type: 'int' },
    ]);
    expect(src.labelNames).toEqual([]);
    expect(src.entries[0]).toMatchObject({
      sourceKey: 'a.png',
      filePath: path.join(dir, 'a.png'),
      label: 1,
      metadata: { patient_id: 'p001', slide: '3', x: 10, y: 20, score: 0.5 },
      origin: `${file}:2`,
    });
    expect(src.entries[1]!.metadata['score']).toBeNull();
  });

  it('maps class-name labels to sorted integers and reads label blobs', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'm.jsonl');
    await writeFile(
      file,
      [
        { path: 'x/1.png', label: 'tumor', label_blob_path: 'masks/1.bin', slide: 2 },
        { path: 'x/2.png', label: 'normal', slide: 3 },
      ]
        .map((o) => JSON.stringify(o))
        .join('\n'),
    );
    const src = await readManifest(file, { root: '/data' });
    expect(src.labelNames).toEqual(['normal', 'tumor']);
    expect(src.entries.map((e) => e.label)).toEqual([1, 0]);
    expect(src.entries[0]!.labelBlobPath).toBe('/data/masks/1.bin');
    expect(src.entries[0]!.filePath).toBe('/data/x/1.png');
    expect(src.columns).toEqual([{ name: 'slide', type: 'int' }]);
  });

  it('reads a manifest without label columns as unlabelled, and needs a label on every row of one with them', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'captions.csv');
    await writeFile(file, 'path,caption\na.jpg,a dog\nb.jpg,a cat\n');
    const src = await readManifest(file);
    expect(src.unlabelled).toBe(`manifest ${file} has no "label" or "label_blob_path" column`);
    expect(src.labelNames).toEqual([]);
    expect(src.entries.map((e) => [e.sourceKey, e.label, e.metadata])).toEqual([
      ['a.jpg', null, { caption: 'a dog' }],
      ['b.jpg', null, { caption: 'a cat' }],
    ]);
    const holes = path.join(dir, 'holes.csv');
    await writeFile(holes, 'path,label\na.jpg,1\nb.jpg,\n');
    await expect(readManifest(holes)).rejects.toThrow(
      `${holes}:3: row has neither a label nor a label_blob_path (a manifest without "label" ` +
        'and "label_blob_path" columns is unlabelled; with them, every row needs one)',
    );
  });

  it('names the file and line of a malformed JSONL line', async () => {
    const dir = await tmp();
    const file = path.join(dir, 'm.jsonl');
    await writeFile(file, '{"path":"a","label":1}\n{"path": oops}\n');
    await expect(readManifest(file)).rejects.toThrow(`${file}:2: malformed JSON line`);
  });

  it('rejects malformed CSV, missing columns, bad names and wrong declared types', async () => {
    const dir = await tmp();
    const bad = path.join(dir, 'bad.csv');
    await writeFile(bad, 'path,label\na.png,1,extra\n');
    await expect(readManifest(bad)).rejects.toThrow(/malformed CSV manifest/);
    const noPath = path.join(dir, 'nopath.csv');
    await writeFile(noPath, 'file,label\na.png,1\n');
    await expect(readManifest(noPath)).rejects.toThrow(/no "path" column/);
    const badName = path.join(dir, 'badname.csv');
    await writeFile(badName, 'path,label,Patient ID\na.png,1,p\n');
    await expect(readManifest(badName)).rejects.toThrow(/invalid metadata column name/);
    const badType = path.join(dir, 'badtype.csv');
    await writeFile(badType, 'path,label,x\na.png,1,abc\n');
    await expect(readManifest(badType, { declaredTypes: { x: 'int' } })).rejects.toThrow(
      /badtype\.csv:2: column x is declared int/,
    );
    await expect(readManifest(path.join(dir, 'missing.csv'))).rejects.toThrow(/does not exist/);
  });
});

describe('readImageFolder', () => {
  it('numbers sorted class folders and keys samples by root-relative POSIX path', async () => {
    const root = await tmp();
    for (const [cls, files] of [
      ['dog', ['b.jpg', 'a.jpg']],
      ['cat', ['z.jpg']],
    ] as const) {
      await mkdir(path.join(root, cls, 'sub'), { recursive: true });
      for (const f of files) await writeFile(path.join(root, cls, f), f);
    }
    await writeFile(path.join(root, 'dog', 'sub', 'c.jpg'), 'c');
    await writeFile(path.join(root, 'dog', '.hidden'), 'h');
    const src = await readImageFolder(root);
    expect(src.labelNames).toEqual(['cat', 'dog']);
    expect(src.entries.map((e) => [e.sourceKey, e.label])).toEqual([
      ['cat/z.jpg', 0],
      ['dog/a.jpg', 1],
      ['dog/b.jpg', 1],
      ['dog/sub/c.jpg', 1],
    ]);
  });

  it('gives a clear error for a missing root or one with neither class folders nor files', async () => {
    await expect(readImageFolder('/nonexistent/root')).rejects.toThrow(/does not exist/);
    const empty = await tmp();
    await expect(readImageFolder(empty)).rejects.toThrow(
      /has neither class folders nor files; expected .*\/<class>\/<file> \(labelled\) or .*\/<file> \(unlabelled\)/,
    );
  });

  it('reads a root of files without class folders as unlabelled', async () => {
    const root = await tmp();
    for (const f of ['b.jpg', 'a.jpg', '.hidden']) await writeFile(path.join(root, f), f);
    const src = await readImageFolder(root);
    expect(src.labelNames).toEqual([]);
    expect(src.unlabelled).toBe(`${root} has files and no class folders`);
    expect(src.entries.map((e) => [e.sourceKey, e.label])).toEqual([
      ['a.jpg', null],
      ['b.jpg', null],
    ]);
    // With a class folder, files beside it are not samples and the tree is labelled.
    await mkdir(path.join(root, 'cat'));
    await writeFile(path.join(root, 'cat', 'c.jpg'), 'c');
    const labelled = await readImageFolder(root);
    expect(labelled.unlabelled).toBeUndefined();
    expect(labelled.entries.map((e) => [e.sourceKey, e.label])).toEqual([['cat/c.jpg', 0]]);
  });
});
