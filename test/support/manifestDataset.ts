import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { ingestDataset, readManifest } from '../../src/core/index.js';

/** What one sample of {@link ingestMixedLabelDataset} holds. */
export interface ExpectedSample {
  label: number;
  blob: Buffer | null;
  data: Buffer;
}

/**
 * Ingests `count` samples of `size` bytes through the real ingest from a manifest: even ones
 * with an integer label, odd ones with a label blob. `version` changes every sample's bytes
 * and blob, not its source key (so a re-ingest keeps the ids). Returns the samples by source
 * key.
 */
export async function ingestMixedLabelDataset(
  client: cassandra.Client,
  dataset: string,
  count: number,
  size: number,
  version = 'v1',
): Promise<Map<string, ExpectedSample>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-mixed-'));
  await mkdir(path.join(dir, 'files'));
  const lines = ['path,label,label_blob_path'];
  const expected = new Map<string, ExpectedSample>();
  for (let i = 0; i < count; i++) {
    const key = `files/${i}.bin`;
    const data = Buffer.from(
      `${version}-sample-${i}-`.padEnd(size, String.fromCharCode(97 + (i % 26))),
    );
    await writeFile(path.join(dir, key), data);
    if (i % 2 === 0) {
      lines.push(`${key},${i % 10},`);
      expected.set(key, { label: i % 10, blob: null, data });
    } else {
      const blob = Buffer.from(`${version}-mask-${i}`);
      await writeFile(path.join(dir, `files/${i}.mask`), blob);
      lines.push(`${key},,files/${i}.mask`);
      expected.set(key, { label: -1, blob, data });
    }
  }
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(client, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv')),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 64,
    strict: true,
  });
  return expected;
}
