import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type cassandra from 'cassandra-driver';
import { ingestDataset, readManifest, datasetNamespace, sampleId } from '../../src/core/index.js';
import { syntheticPathology, type Tile } from './syntheticPathology.js';

/**
 * Ingests a synthetic pathology set (see {@link syntheticPathology}) through the real ingest:
 * one tiny file per tile and a manifest with `patient_id`, `slide`, `x`, `y` and the label.
 * Returns the tiles with their sample ids.
 */
export async function ingestPathologyDataset(
  client: cassandra.Client,
  dataset: string,
  patients: number,
): Promise<Array<Tile & { id: string }>> {
  const tiles = syntheticPathology(patients, 7);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sl-patho-'));
  await mkdir(path.join(dir, 'tiles'));
  const lines = ['path,label,patient_id,slide,x,y'];
  const ns = datasetNamespace(dataset);
  const out: Array<Tile & { id: string }> = [];
  for (const [i, t] of tiles.entries()) {
    const key = `tiles/${i}.bin`;
    await writeFile(path.join(dir, key), `tile-${i}`);
    lines.push(`${key},${t.label},p${String(t.patient).padStart(4, '0')},${t.slide},${t.x},${t.y}`);
    out.push({ ...t, id: sampleId(key, ns) });
  }
  await writeFile(path.join(dir, 'manifest.csv'), `${lines.join('\n')}\n`);
  await ingestDataset(client, {
    dataset,
    source: await readManifest(path.join(dir, 'manifest.csv'), {
      declaredTypes: { slide: 'text' },
    }),
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    concurrency: 64,
    strict: false,
  });
  return out;
}
