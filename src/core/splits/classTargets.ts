import { invalidArgument } from '../errors/LoaderError.js';
import { apportion } from './apportion.js';
import type { ClassTargets } from './SplitSpec.js';

/**
 * Total samples wanted per label, from the samples available per label:
 * - natural: everything available;
 * - balanced: as many of every label as the rarest label has;
 * - ratios: the largest totals in the given proportions that the available samples allow
 *   (labels not named get none);
 * then scaled down to `maxTotal` if given. Reaching a target means undersampling the larger
 * labels. A label named in the ratios without any sample is an INVALID_ARGUMENT error.
 */
export function classTargets(
  available: ReadonlyMap<number, number>,
  targets: ClassTargets,
  maxTotal?: number,
): Map<number, number> {
  const labels = [...available.keys()].sort((a, b) => a - b);
  let wanted = new Map<number, number>();
  if (targets.mode === 'natural') {
    wanted = new Map(available);
  } else if (targets.mode === 'balanced') {
    const least = Math.min(...labels.map((l) => available.get(l)!));
    for (const l of labels) wanted.set(l, least);
  } else {
    const named = Object.entries(targets.ratios).map(([l, r]) => [Number(l), r] as const);
    if (named.length === 0) throw invalidArgument('class ratios name no label');
    for (const [label, ratio] of named) {
      if (!(ratio > 0)) throw invalidArgument(`class ratio of label ${label} must be positive`);
      if (!available.get(label)) {
        throw invalidArgument(
          `label ${label} has no samples (after the filter), so its ratio cannot be met; ` +
            `labels with samples: ${labels.join(', ')}`,
        );
      }
    }
    const sum = named.reduce((a, [, r]) => a + r, 0);
    const total = Math.min(...named.map(([l, r]) => Math.floor((available.get(l)! * sum) / r)));
    const shares = apportion(
      total,
      named.map(([, r]) => r),
    );
    named.forEach(([l], i) => wanted.set(l, Math.min(shares[i]!, available.get(l)!)));
  }
  const sum = [...wanted.values()].reduce((a, b) => a + b, 0);
  if (maxTotal !== undefined && sum > maxTotal) {
    const keys = [...wanted.keys()];
    const shares = apportion(
      maxTotal,
      keys.map((k) => wanted.get(k)!),
    );
    keys.forEach((k, i) => wanted.set(k, shares[i]!));
  }
  return wanted;
}
