import type cassandra from 'cassandra-driver';
import { notFound } from '../errors/LoaderError.js';
import { type Offloader, sharedOffloader } from '../offload/Offloader.js';
import { requireDataset } from '../schema/datasetSchema.js';
import { ALL_SPLIT, loadSplitIds } from './loadSplitIds.js';
import { parseSplitRef } from './splitNames.js';
import type { SplitIds } from './SplitIds.js';
import type { SplitIdsCache } from './createSplitIdsCache.js';
import { readPartIds, readSplitSetInfo } from './splitStore.js';
import { splitTablesExist } from './splitTablesExist.js';

/**
 * `all` reflects later ingests: its cached ids are re-read after this long. A resume token is
 * bound to the ids' hash, so a stream never silently mixes two versions of the split.
 */
const ALL_SPLIT_TTL_MS = 60_000;

/**
 * The ids a stream's `split` names, through the process-wide cache: `all`; `set/part` (latest
 * version, looked up on every call so a new version is seen at once); `set@version/part`; and
 * for k-fold sets `set/train-<i>` (every fold but i, in fold order) and `set/val-<i>` (fold i).
 * Stored sets never change, so their ids are cached by version without expiry.
 *
 * Concurrent calls for one split share its load; a call whose `signal` fires rejects with the
 * signal's reason at once, and the load (its reads, and the sort and hash that run on
 * `offloader`'s threads for a large split) stops when no call waits for it.
 */
export async function resolveSplit(
  client: cassandra.Client,
  cache: SplitIdsCache,
  dataset: string,
  split: string,
  signal?: AbortSignal,
  offloader: Offloader = sharedOffloader(),
): Promise<SplitIds> {
  const ref = parseSplitRef(split);
  if (ref.kind === 'all') {
    return cache.lookup(
      `${dataset}/${ALL_SPLIT}`,
      (stop) => loadSplitIds(client, dataset, stop, offloader),
      { ttl: ALL_SPLIT_TTL_MS, signal },
    );
  }
  await requireDataset(client, dataset);
  if (!(await splitTablesExist(client, dataset))) {
    throw notFound(`dataset ${dataset} has no split sets yet; create one with \`splits create\``);
  }
  const info = await readSplitSetInfo(client, dataset, ref.set, ref.version);
  signal?.throwIfAborted();
  const load = async (stop: AbortSignal): Promise<SplitIds> => {
    const fold = /^(train|val)-(\d+)$/.exec(ref.part);
    let pieces: Buffer[];
    if (fold && info.folds > 0 && !info.parts.some((p) => p.name === ref.part)) {
      const i = Number(fold[2]);
      if (i >= info.folds) {
        throw notFound(
          `split set ${info.name} has ${info.folds} folds; ${ref.part} does not exist`,
        );
      }
      const names =
        fold[1] === 'val'
          ? [`fold-${i}`]
          : info.parts.map((p) => p.name).filter((n) => n !== `fold-${i}`);
      pieces = await Promise.all(names.map((n) => readPartIds(client, dataset, info, n, stop)));
    } else {
      pieces = [await readPartIds(client, dataset, info, ref.part, stop)];
    }
    // Joined and hashed off the event loop when large (the pieces are moved, not copied).
    return offloader.run('splitIds', { pieces, sort: false }, stop);
  };
  return cache.lookup(`${dataset}/${ref.set}@${info.version}/${ref.part}`, load, { signal });
}
