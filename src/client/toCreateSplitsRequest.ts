import type { ClassTargetMode } from '../generated/scylla_loader/v1/ClassTargetMode.js';
import type { CreateSplitsRequest } from '../generated/scylla_loader/v1/CreateSplitsRequest.js';
import type { MetadataFilter } from '../generated/scylla_loader/v1/MetadataFilter.js';
import type { CreateSplitsOptions, SplitFilter } from './CreateSplitsOptions.js';
import { seedString, uint32 } from './toProtoRequest.js';

/**
 * Converts the SDK's options to the proto's `CreateSplitsRequest`. Throws a RangeError for a
 * value the proto cannot carry or that cannot mean anything (a non-finite weight, a negative
 * or fractional size, a filter without a condition); names and feasibility are the server's
 * to check.
 *
 * @internal
 */
export function toCreateSplitsRequest(options: CreateSplitsOptions): CreateSplitsRequest {
  const parts = Object.entries(options.parts ?? {}).map(([name, weight]) => {
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0) {
      throw new RangeError(`parts.${name} must be a positive number, got ${String(weight)}`);
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
    if (typeof ratio !== 'number' || !Number.isFinite(ratio) || ratio <= 0) {
      throw new RangeError(`classTargets.ratios[${label}] must be a positive number`);
    }
    ratios[Number(label)] = ratio;
  }
  return { mode: 'CLASS_TARGET_MODE_RATIOS', ratios };
}

function filterMessage(filter: SplitFilter, index: number): MetadataFilter {
  const column = filter.column;
  if ('equals' in filter) return { column, equals: String(filter.equals) };
  if ('in' in filter) return { column, in: { values: filter.in.map(String) } };
  const { min, max } = filter;
  if (min === undefined && max === undefined) {
    throw new RangeError(`filters[${index}] (${column}) needs equals, in, or a min or max`);
  }
  for (const v of [min, max]) {
    if (v !== undefined && (typeof v !== 'number' || Number.isNaN(v))) {
      throw new RangeError(`filters[${index}] (${column}): min and max must be numbers`);
    }
  }
  return {
    column,
    range: { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) },
  };
}
