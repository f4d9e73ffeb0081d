/**
 * The median of `values` (the mean of the middle two for an even count); NaN when empty. @internal
 */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/**
 * The `q`-quantile of `values` with linear interpolation between order statistics (as numpy's
 * default); NaN when empty. @internal
 */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * Math.min(Math.max(q, 0), 1);
  const lo = Math.floor(at);
  const hi = Math.ceil(at);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (at - lo);
}

/** The median of `pick` over `items`; undefined when some item lacks the figure. @internal */
export function medianOfAll<T>(
  items: readonly T[],
  pick: (item: T) => number | undefined,
): number | undefined {
  const values = items.map(pick);
  return values.some((v) => v === undefined) ? undefined : median(values as number[]);
}
