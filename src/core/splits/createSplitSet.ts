import { createHash } from 'node:crypto';
import type cassandra from 'cassandra-driver';
export type { CreateSplitSetRequest } from './CreateSplitSetRequest.js';
import { LoaderError } from '../errors/LoaderError.js';
import { type NameOption, ownOptionName } from '../ingest/nameOption.js';
import { requireDataset } from '../schema/datasetSchema.js';
import { assignSplits } from './assignSplits.js';
import { readSplitInput } from './readSplitInput.js';
import { refuseUnlabelled } from './refuseUnlabelled.js';
import type { SplitSetInfo } from './SplitSetInfo.js';
import { splitRequestSchema } from './splitRequestSchema.js';
import type { CreateSplitSetRequest } from './CreateSplitSetRequest.js';
import { ensureSplitTables, latestSplitVersion, writeSplitSet } from './splitStore.js';

/**
 * Makes a split set from the dataset's metadata and stores it (see `writeSplitSet`): checks the
 * request ({@link splitRequestSchema}: a `ZodError` naming each invalid field), reads the
 * needed columns with a parallel scan, assigns whole groups and samples to parts
 * (`assignSplits`), and writes the parts' ids and, last, the info row. A refusal that a
 * request option would lift names it as `hooks.nameOption` does: the CLI passes its flags
 * (`--new-version`), the gRPC handler the request's fields (`new_version`), a library caller
 * reads the option's own name (`newVersion`).
 */
export async function createSplitSet(
  client: cassandra.Client,
  request: CreateSplitSetRequest,
  hooks: {
    onScanProgress?: (rows: number) => void;
    signal?: AbortSignal;
    nameOption?: NameOption;
  } = {},
): Promise<SplitSetInfo> {
  const nameOption = hooks.nameOption ?? ownOptionName;
  const req: CreateSplitSetRequest = splitRequestSchema.parse(request);
  const name = req.name;
  const parts: Array<[string, number]> =
    req.folds > 0 ? Array.from({ length: req.folds }, (_, i) => [`fold-${i}`, 1]) : req.parts;
  await requireDataset(client, req.dataset);
  await ensureSplitTables(client, req.dataset);
  const latest = await latestSplitVersion(client, req.dataset, name);
  if (latest > 0 && !req.newVersion) {
    throw new LoaderError(
      'ALREADY_EXISTS',
      `split set ${name} already exists (version ${latest}); split sets never change, so ask ` +
        `for a new version (${nameOption('newVersion')}) to write version ${latest + 1}`,
    );
  }

  const input = await readSplitInput(client, req.dataset, {
    groupBy: req.groupBy,
    filters: req.filters,
    ...(hooks.onScanProgress ? { onProgress: hooks.onScanProgress } : {}),
    ...(hooks.signal ? { signal: hooks.signal } : {}),
  });
  refuseUnlabelled(req.dataset, input, req.classTargets);
  const result = assignSplits(
    input,
    {
      parts,
      classTargets: req.classTargets,
      ...(req.maxTotal !== undefined ? { maxTotal: req.maxTotal } : {}),
      seed: req.seed,
      allowShortfall: req.allowShortfall,
    },
    nameOption,
  );

  hooks.signal?.throwIfAborted();
  const hash = createHash('sha256');
  const stored = result.parts.map((p) => {
    const ids = Buffer.allocUnsafe(p.samples.length * 16);
    p.samples.forEach((s, i) => input.ids.copy(ids, i * 16, s * 16, s * 16 + 16));
    hash.update(p.name).update('\u0000').update(ids);
    return {
      name: p.name,
      size: p.samples.length,
      classCounts: Object.fromEntries(p.classCounts),
      targets: Object.fromEntries(p.targets),
      groups: p.groups,
      ids,
    };
  });
  return writeSplitSet(
    client,
    req.dataset,
    {
      name,
      version: latest + 1,
      params: {
        parts: req.folds > 0 ? [] : req.parts,
        folds: req.folds,
        groupBy: req.groupBy,
        classTargets: req.classTargets,
        maxTotal: req.maxTotal ?? null,
        filters: req.filters,
        seed: req.seed.toString(),
        allowShortfall: req.allowShortfall,
        samplesConsidered: input.count,
        groupsConsidered: input.groupCount,
      },
      seed: req.seed,
      folds: req.folds,
      parts: stored,
      contentHash: hash.digest('hex'),
      worstDeviation: result.worstDeviation,
      createdAt: new Date(),
    },
    hooks.signal,
  );
}
