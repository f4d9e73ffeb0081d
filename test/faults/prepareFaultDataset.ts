import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type cassandra from 'cassandra-driver';
import {
  createSplitSet,
  datasetExists,
  ingestDataset,
  readManifest,
} from '../../src/core/index.js';

/** The dataset a fault scenario streams. @internal */
export interface FaultDataset {
  dataset: string;
  /** The stored split the scenarios stream (`faults/train`), so the check reads split chunks. */
  split: string;
  samples: number;
}

/**
 * Ingests `samples` synthetic samples of `sampleBytes` each (through the real ingest, at
 * replication factor `replicationFactor`) and stores a split set `faults` (train 9 : val 1)
 * made by the real split code. A dataset of that name that already exists is reused as it is
 * (the benchmark keeps it between runs; the tests use fresh names).
 *
 * @internal
 */
export async function prepareFaultDataset(
  client: cassandra.Client,
  options: { dataset: string; samples: number; sampleBytes: number; replicationFactor: number },
): Promise<FaultDataset> {
  const result = { dataset: options.dataset, split: 'faults/train', samples: options.samples };
  if (await datasetExists(client, options.dataset)) return result;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-faults-'));
  try {
    await mkdir(path.join(dir, 'files'));
    const lines = ['path,label,group'];
    for (let i = 0; i < options.samples; i++) {
      const key = `files/${i}.bin`;
      await writeFile(
        path.join(dir, key),
        Buffer.from(`fault-sample-${i}-`.padEnd(options.sampleBytes, 'x')),
      );
      lines.push(`${key},${i % 10},g${i % 97}`);
    }
    await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
    await ingestDataset(client, {
      dataset: options.dataset,
      source: await readManifest(path.join(dir, 'manifest.csv')),
      replication: { class: 'SimpleStrategy', replicationFactor: options.replicationFactor },
      concurrency: 64,
      strict: true,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  // On a fresh ring under load, schema changes can take longer to reach every node than the
  // driver waits for (10 s): the split set's check of the dataset's tables, answered by a
  // node that has not seen them yet, said NOT_FOUND. Wait until the nodes agree.
  // (The driver has the check; its typings lack it.)
  const metadata = client.metadata as unknown as { checkSchemaAgreement(): Promise<boolean> };
  for (let i = 0; i < 120 && !(await metadata.checkSchemaAgreement()); i++) {
    await sleep(500);
  }
  await createSplitSet(client, {
    dataset: options.dataset,
    name: 'faults',
    parts: [
      ['train', 9],
      ['val', 1],
    ],
    folds: 0,
    groupBy: [],
    classTargets: { mode: 'natural' },
    filters: [],
    seed: 7n,
    newVersion: false,
    allowShortfall: true,
  });
  return result;
}
