import { createWriteStream } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { parquetWriteFile } from 'hyparquet-writer';
import tar from 'tar-stream';

/** One sample of a benchmark payload, its bytes in memory. @internal */
export interface PayloadRow {
  sourceKey: string;
  data: Buffer;
  label: number;
  /** File extension of the image (png, jpg). */
  ext: string;
}

/** The same payload as WebDataset shards and a Parquet file. @internal */
export interface IngestFormats {
  webdataset: string[];
  parquet: string[];
}

/** Samples per WebDataset shard and per Parquet row group, and bytes per shard at most. */
const SHARD_SAMPLES = 10_000;
const SHARD_BYTES = 64 * 1024 * 1024;
const ROW_GROUP_BYTES = 32 * 1024 * 1024;

/**
 * Writes `rows` as WebDataset tar shards (`<key>.<ext>` and `<key>.cls` per sample, at most
 * 10,000 samples or 64 MiB a shard) and as one Parquet file (an `image` binary column and an
 * `label` int32 column, row groups of at most 32 MiB), in `dir`, once: a marker naming the
 * row count makes later runs reuse them. @internal
 */
export async function prepareIngestFormats(
  dir: string,
  rows: readonly PayloadRow[],
): Promise<IngestFormats> {
  const marker = path.join(dir, 'made.json');
  const made = await readFile(marker, 'utf8')
    .then((t) => JSON.parse(t) as IngestFormats & { rows: number })
    .catch(() => undefined);
  if (made?.rows === rows.length) return { webdataset: made.webdataset, parquet: made.parquet };

  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const webdataset: string[] = [];
  let start = 0;
  while (start < rows.length) {
    let end = start;
    let bytes = 0;
    while (end < rows.length && end - start < SHARD_SAMPLES && bytes < SHARD_BYTES) {
      bytes += rows[end]!.data.length;
      end++;
    }
    const file = path.join(dir, `shard-${String(webdataset.length).padStart(6, '0')}.tar`);
    await writeShard(file, rows.slice(start, end), start);
    webdataset.push(file);
    start = end;
  }

  const meanBytes = rows.reduce((s, r) => s + r.data.length, 0) / Math.max(1, rows.length);
  const parquet = [path.join(dir, 'samples.parquet')];
  await parquetWriteFile({
    filename: parquet[0]!,
    columnData: [
      { name: 'image', data: rows.map((r) => new Uint8Array(r.data)), type: 'BYTE_ARRAY' },
      { name: 'label', data: rows.map((r) => r.label), type: 'INT32' },
    ],
    rowGroupSize: Math.max(100, Math.floor(ROW_GROUP_BYTES / Math.max(1, meanBytes))),
  });
  await writeFile(marker, JSON.stringify({ rows: rows.length, webdataset, parquet }));
  return { webdataset, parquet };
}

async function writeShard(file: string, rows: readonly PayloadRow[], first: number) {
  const pack = tar.pack();
  const done = pipeline(pack, createWriteStream(file));
  for (const [i, r] of rows.entries()) {
    const key = String(first + i).padStart(8, '0');
    await entry(pack, `${key}.${r.ext}`, r.data);
    await entry(pack, `${key}.cls`, Buffer.from(String(r.label)));
  }
  pack.finalize();
  await done;
}

function entry(pack: tar.Pack, name: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry({ name, size: data.length }, data, (err) => (err ? reject(err) : resolve()));
  });
}
