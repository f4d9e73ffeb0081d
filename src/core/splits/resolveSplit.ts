import { createHash } from 'node:crypto';
import type cassandra from 'cassandra-driver';
import { notFound } from '../errors/LoaderError.js';
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
 */
export async function resolveSplit(
  client: cassandra.Client,
  cache: SplitIdsCache,
  dataset: string,
  split: string,
): Promise<SplitIds> {
  const ref = parseSplitRef(split);
  if (ref.kind === 'all') {
    return cache.forceFetch(`${dataset}/${ALL_SPLIT}`, {
      context: () => loadSplitIds(client, dataset),
      ttl: ALL_SPLIT_TTL_MS,
    });
  }
  await requireDataset(client, dataset);
  if (!(await splitTablesExist(client, dataset))) {
    throw notFound(`dataset ${dataset} has no split sets yet; create one with \`splits create\``);
  }
  const info = await readSplitSetInfo(client, dataset, ref.set, ref.version);
  const load = async (): Promise<SplitIds> => {
    const fold = /^(train|val)-(\d+)$/.exec(ref.part);
    let ids: Buffer;
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
      ids = Buffer.concat(
        await Promise.all(names.map((n) => readPartIds(client, dataset, info, n))),
      );
    } else {
      ids = await readPartIds(client, dataset, info, ref.part);
    }
    return {
      ids,
      count: ids.length / 16,
      contentHash: createHash('sha256').update(ids).digest('hex'),
    };
  };
  return cache.forceFetch(`${dataset}/${ref.set}@${info.version}/${ref.part}`, { context: load });
}
