/**
 * Child process of the split benchmark: creates one split set and prints its figures as one
 * JSON line, so its peak memory is the split's alone. Arguments come as JSON in argv[2]. @internal
 */
import {
  assignSplits,
  createDbClient,
  createSplitSet,
  readSplitInput,
} from '../../src/core/index.js';
import { dbConfigFromEnv } from '../../src/cli/index.js';

const args = JSON.parse(process.argv[2] ?? '{}') as { dataset: string; name: string; seed: string };
const client = await createDbClient(dbConfigFromEnv(process.env, { contactPoints: ['127.0.0.1'] }));
const request = {
  dataset: args.dataset,
  name: args.name,
  parts: [
    ['train', 7],
    ['val', 2],
    ['test', 1],
  ] as Array<[string, number]>,
  folds: 0,
  groupBy: ['group_id'],
  classTargets: { mode: 'balanced' as const },
  filters: [],
  seed: BigInt(args.seed),
  newVersion: true,
  allowShortfall: true,
};
const t0 = performance.now();
const info = await createSplitSet(client, request);
const total = (performance.now() - t0) / 1000;
const peakRssBytes = process.resourceUsage().maxRSS * 1024;

// A second pass, timed by stage, for the breakdown (same work, minus the write).
const t1 = performance.now();
const input = await readSplitInput(client, args.dataset, { groupBy: ['group_id'], filters: [] });
const t2 = performance.now();
assignSplits(input, { ...request, parts: request.parts });
const t3 = performance.now();
await client.shutdown();
process.stdout.write(
  `${JSON.stringify({
    seconds: total,
    scanSeconds: (t2 - t1) / 1000,
    assignSeconds: (t3 - t2) / 1000,
    peakRssBytes,
    rows: input.count,
    groups: input.groupCount,
    version: info.version,
    worstDeviation: info.worstDeviation,
    parts: info.parts.map((p) => ({
      name: p.name,
      size: p.size,
      classes: Object.keys(p.classCounts).length,
    })),
  })}\n`,
);
