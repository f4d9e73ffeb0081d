import type { SplitSet } from '../../generated/scylla_loader/v1/SplitSet.js';
import type { SplitSetInfo } from '../../core/index.js';

/**
 * A stored split set as the `SplitSet` message: counts as decimal strings (uint64 on the
 * wire), the parameters as JSON, the creation time as a Timestamp.
 *
 * @internal
 */
export function toSplitSetMessage(info: SplitSetInfo): SplitSet {
  const ms = info.createdAt.getTime();
  const seconds = Math.floor(ms / 1000);
  return {
    name: info.name,
    version: info.version,
    paramsJson: JSON.stringify(info.params),
    seed: info.seed.toString(),
    folds: info.folds,
    parts: info.parts.map((p) => ({
      name: p.name,
      size: String(p.size),
      classCounts: countsMessage(p.classCounts),
      targets: countsMessage(p.targets),
      groups: String(p.groups),
    })),
    contentHash: info.contentHash,
    worstDeviation: info.worstDeviation,
    createdAt: { seconds: String(seconds), nanos: (ms - seconds * 1000) * 1_000_000 },
  };
}

function countsMessage(counts: Record<string, number>): Record<number, string> {
  const out: Record<number, string> = {};
  for (const [label, n] of Object.entries(counts)) out[Number(label)] = String(n);
  return out;
}
