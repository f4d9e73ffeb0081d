import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { ingestDataset, readManifest } from '../../src/core/index.js';

/**
 * Ingests `count` small samples (`size` bytes each, content `sample-<i>` padded) through the
 * real ingest, with labels `i mod classes`, and returns the map from source key to content.
 */
export async function ingestSmallDataset(
  client: cassandra.Client,
  dataset: string,
  count: number,
  classes = 10,
  size = 100,
): Promise<Map<string, { label: number; data: Buffer }>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-small-'));
  await mkdir(path.join(dir, 'files'));
  const lines = ['path,label,group'];
  const expected = new Map<string, { label: number; data: Buffer }>();
  for (let i = 0; i < count; i++) {
    const key = `files/${i}.bin`;
    const data = Buffer.from(`sample-${i}-`.padEnd(size, 'x'));
    await writeFile(path.join(dir, key), data);
    lines.push(`${key},${i % classes},g${i % 7}`);
    expected.set(key, { label: i % classes, data });
  }
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(client, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv')),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 64,
    strict: false,
  });
  return expected;
}
