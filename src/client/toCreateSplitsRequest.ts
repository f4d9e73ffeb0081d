import type { ClassTargetMode } from '../generated/scylla_loader/v1/ClassTargetMode.js';
import type { CreateSplitsRequest } from '../generated/scylla_loader/v1/CreateSplitsRequest.js';
import type { MetadataFilter } from '../generated/scylla_loader/v1/MetadataFilter.js';
import type { CreateSplitsOptions, SplitFilter } from './CreateSplitsOptions.js';
import { seedString, uint32 } from './toProtoRequest.js';

/**
 * Converts the SDK's options to the proto's `CreateSplitsRequest`. Throws a RangeError only for
 * a value the proto cannot carry (a weight or ratio that is not a number, a negative or
 * fractional size or fold count, a seed beyond 64 bits, a label that is not an integer).
 * Whether the request makes sense (names, positive weights and ratios, parts or folds, one
 * condition per filter, a range's min not above its max) is judged by the core's one
 * validator: the SDK runs it before sending (`checkCreateSplits`), the server again.
 *
 * @internal
 */
export function toCreateSplitsRequest(options: CreateSplitsOptions): CreateSplitsRequest {
  const parts = Object.entries(options.parts ?? {}).map(([name, weight]) => {
    if (typeof weight !== 'number') {
      throw new RangeError(`parts.${name} must be a number, got ${String(weight)}`);
    }
    return { name, weight };
  });
  const maxTotal = options.maxTotal ?? 0;
  if (!Number.isSafeInteger(maxTotal) || maxTotal < 0) {
    throw new RangeError(`maxTotal must be a non-negative integer, got ${maxTotal}`);
  }
  const groupBy = options.groupBy ?? [];
  const { mode, ratios } = classTargets(options.classTargets);
  return {
    dataset: options.dataset,
    name: options.name,
    parts,
    folds: uint32('folds', options.folds),
    groupBy: typeof groupBy === 'string' ? [groupBy] : [...groupBy],
    classTargetMode: mode,
    classRatios: ratios,
    maxTotal: String(maxTotal),
    filters: (options.filters ?? []).map(filterMessage),
    seed: seedString(options.seed),
    newVersion: options.newVersion ?? false,
    allowShortfall: options.allowShortfall ?? false,
  };
}

function classTargets(option: CreateSplitsOptions['classTargets']): {
  mode: ClassTargetMode;
  ratios: Record<number, number>;
} {
  if (option === undefined) return { mode: 'CLASS_TARGET_MODE_UNSPECIFIED', ratios: {} };
  if (option === 'natural') return { mode: 'CLASS_TARGET_MODE_NATURAL', ratios: {} };
  if (option === 'balanced') return { mode: 'CLASS_TARGET_MODE_BALANCED', ratios: {} };
  if (typeof option !== 'object' || option === null || typeof option.ratios !== 'object') {
    throw new RangeError(
      `classTargets must be 'natural', 'balanced' or { ratios }, got ${JSON.stringify(option)}`,
    );
  }
  const ratios: Record<number, number> = {};
  for (const [label, ratio] of Object.entries(option.ratios)) {
    if (!/^-?\d+$/.test(label)) {
      throw new RangeError(`classTargets.ratios keys must be integer labels, got '${label}'`);
    }
    if (typeof ratio !== 'number') {
      throw new RangeError(`classTargets.ratios[${label}] must be a number`);
    }
    ratios[Number(label)] = ratio;
  }
  return { mode: 'CLASS_TARGET_MODE_RATIOS', ratios };
}

function filterMessage(filter: SplitFilter, index: number): MetadataFilter {
  const column = filter.column;
  if ('equals' in filter) return { column, equals: String(filter.equals) };
  if ('in' in filter) return { column, in: { values: filter.in.map(String) } };
  // Neither min nor max is sent as an empty range, which the server refuses as a filter
  // without a condition.
  const { min, max } = filter;
  for (const v of [min, max]) {
    if (v !== undefined && typeof v !== 'number') {
      throw new RangeError(`filters[${index}] (${column}): min and max must be numbers`);
    }
  }
  return {
    column,
    range: { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) },
  };
}
