import type cassandra from 'cassandra-driver';
import { scanTokenRanges } from '../db/scanTokenRanges.js';
import { type Offloader, sharedOffloader } from '../offload/Offloader.js';
import { requireDataset } from '../schema/datasetSchema.js';
import type { SplitIds } from './SplitIds.js';

/** The implicit split of every sample of a dataset. */
export const ALL_SPLIT = 'all';

/**
 * Reads the ids of split `all`: every sample id of the dataset, read with a token-range scan of
 * the metadata table and sorted by id bytes, so that every replica derives the same order (and
 * therefore the same permutations). The sort and the hash of a large split run on
 * `offloader`'s threads; the scan stops, and the promise rejects with the signal's reason, once
 * `signal` fires. Stored split sets are read by `resolveSplit`.
 */
export async function loadSplitIds(
  client: cassandra.Client,
  dataset: string,
  signal?: AbortSignal,
  offloader: Offloader = sharedOffloader(),
): Promise<SplitIds> {
  await requireDataset(client, dataset);
  signal?.throwIfAborted();
  // Packed as they arrive (copies: the driver's buffers view whole response pages), in a
  // buffer that doubles when full, then sorted without an object per id.
  let packed = Buffer.allocUnsafe(16 * 4096);
  let count = 0;
  await scanTokenRanges(client, {
    keyspace: dataset,
    table: 'metadata',
    columns: ['id'],
    signal,
    onRows: (rows) => {
      for (const r of rows) {
        if ((count + 1) * 16 > packed.length) {
          const grown = Buffer.allocUnsafe(packed.length * 2);
          packed.copy(grown, 0, 0, count * 16);
          packed = grown;
        }
        (r['id'] as cassandra.types.Uuid).getBuffer().copy(packed, count * 16);
        count++;
      }
    },
  });
  return offloader.run(
    'splitIds',
    { pieces: [packed.subarray(0, count * 16)], sort: true },
    signal,
  );
}
