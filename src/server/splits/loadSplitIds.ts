import { createHash } from 'node:crypto';
import type cassandra from 'cassandra-driver';
import { scanTokenRanges } from '../db/scanTokenRanges.js';
import { requireDataset } from '../schema/datasetSchema.js';
import type { SplitIds } from './SplitIds.js';

/** The implicit split of every sample of a dataset. */
export const ALL_SPLIT = 'all';

/**
 * Reads the ids of split `all`: every sample id of the dataset, read with a token-range scan of
 * the metadata table and sorted by id bytes, so that every replica derives the same order (and
 * therefore the same permutations). Stored split sets are read by `resolveSplit`.
 */
export async function loadSplitIds(client: cassandra.Client, dataset: string): Promise<SplitIds> {
  await requireDataset(client, dataset);
  const chunks: Buffer[] = [];
  await scanTokenRanges(client, {
    keyspace: dataset,
    table: 'metadata',
    columns: ['id'],
    onRows: (rows) => {
      // A copy: the driver's buffers view whole response pages (copyBuffer: false), and
      // keeping 16-byte views would keep every page alive.
      for (const r of rows) chunks.push(Buffer.from((r['id'] as cassandra.types.Uuid).getBuffer()));
    },
  });
  chunks.sort(Buffer.compare);
  const ids = Buffer.concat(chunks, chunks.length * 16);
  return {
    ids,
    count: chunks.length,
    contentHash: createHash('sha256').update(ids).digest('hex'),
  };
}
