import type { SplitSet__Output } from '../generated/scylla_loader/v1/SplitSet.js';
import type { SplitSet } from './SplitSet.js';

/**
 * Converts a `SplitSet` message (uint64 as decimal strings, parameters as JSON) to a plain
 * object with numbers.
 *
 * @internal
 */
export function toSplitSet(message: SplitSet__Output | null): SplitSet {
  if (message === null) throw new TypeError('the response carries no split set');
  const ms =
    message.createdAt === null
      ? 0
      : Number(message.createdAt.seconds) * 1000 + Math.floor(message.createdAt.nanos / 1e6);
  const pinned = `${message.name}@${message.version}`;
  const streamableSplits = message.parts.map((p) => `${pinned}/${p.name}`);
  for (let i = 0; i < message.folds; i++) {
    streamableSplits.push(`${pinned}/train-${i}`, `${pinned}/val-${i}`);
  }
  return {
    name: message.name,
    version: message.version,
    params: message.paramsJson ? (JSON.parse(message.paramsJson) as Record<string, unknown>) : {},
    seed: BigInt(message.seed),
    folds: message.folds,
    parts: message.parts.map((p) => ({
      name: p.name,
      size: Number(p.size),
      classCounts: numbers(p.classCounts),
      targets: numbers(p.targets),
      groups: Number(p.groups),
    })),
    contentHash: message.contentHash,
    worstDeviation: message.worstDeviation,
    createdAt: new Date(ms),
    streamableSplits,
  };
}

function numbers(counts: Record<number, string>): Record<number, number> {
  const out: Record<number, number> = {};
  for (const [label, n] of Object.entries(counts)) out[Number(label)] = Number(n);
  return out;
}
