import type { CreateSplitsRequest__Output } from '../../generated/scylla_loader/v1/CreateSplitsRequest.js';
import type { MetadataFilter__Output } from '../../generated/scylla_loader/v1/MetadataFilter.js';
import {
  invalidArgument,
  validateIdentifier,
  type CreateSplitSetRequest,
  type MetadataFilter,
  type ClassTargets,
} from '../../core/index.js';

/**
 * Turns a `CreateSplitsRequest` into what `createSplitSet` takes, refusing what the message's
 * types allow but the request cannot mean (a non-finite weight, a filter without a
 * condition, ratios with another target mode). Names, weights' signs, folds and feasibility
 * are checked by `createSplitSet` itself, the same for the RPC and the CLI.
 *
 * @internal
 */
export function toCreateSplitSetRequest(req: CreateSplitsRequest__Output): CreateSplitSetRequest {
  const dataset = validateIdentifier(req.dataset, 'dataset');
  const parts = req.parts.map((p): [string, number] => {
    if (!Number.isFinite(p.weight)) {
      throw invalidArgument(`part ${p.name} needs a finite positive weight, got ${p.weight}`);
    }
    return [p.name, p.weight];
  });
  const maxTotal = BigInt(req.maxTotal);
  if (maxTotal > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw invalidArgument(`max_total is at most ${Number.MAX_SAFE_INTEGER}, got ${req.maxTotal}`);
  }
  return {
    dataset,
    name: req.name,
    parts,
    folds: req.folds,
    groupBy: [...req.groupBy],
    classTargets: classTargetsOf(req),
    ...(maxTotal > 0n ? { maxTotal: Number(maxTotal) } : {}),
    filters: req.filters.map(filterOf),
    seed: BigInt(req.seed),
    newVersion: req.newVersion,
    allowShortfall: req.allowShortfall,
  };
}

function classTargetsOf(req: CreateSplitsRequest__Output): ClassTargets {
  const named = Object.entries(req.classRatios);
  if (req.classTargetMode !== 'CLASS_TARGET_MODE_RATIOS') {
    if (named.length > 0) {
      throw invalidArgument(
        'class_ratios are given but class_target_mode is not CLASS_TARGET_MODE_RATIOS; ' +
          'set it to use the ratios',
      );
    }
    return req.classTargetMode === 'CLASS_TARGET_MODE_BALANCED'
      ? { mode: 'balanced' }
      : { mode: 'natural' };
  }
  if (named.length === 0) {
    throw invalidArgument('class_target_mode RATIOS needs class_ratios (e.g. {0: 1, 1: 1})');
  }
  const ratios: Record<number, number> = {};
  for (const [label, ratio] of named) {
    if (!Number.isFinite(ratio)) {
      throw invalidArgument(`class ratio of label ${label} must be finite, got ${ratio}`);
    }
    ratios[Number(label)] = ratio;
  }
  return { mode: 'ratios', ratios };
}

function filterOf(f: MetadataFilter__Output, index: number): MetadataFilter {
  const column = f.column;
  switch (f.condition) {
    case 'equals':
      return { column, equals: f.equals ?? '' };
    case 'in': {
      const values = f.in?.values ?? [];
      if (values.length === 0) {
        throw invalidArgument(`filter ${index} (${column}): "in" needs at least one value`);
      }
      return { column, in: [...values] };
    }
    case 'range': {
      const { min, max } = f.range ?? {};
      for (const [end, v] of [
        ['min', min],
        ['max', max],
      ] as const) {
        if (v !== undefined && Number.isNaN(v)) {
          throw invalidArgument(`filter ${index} (${column}): range ${end} is not a number`);
        }
      }
      if (min !== undefined && max !== undefined && min > max) {
        throw invalidArgument(
          `filter ${index} (${column}): range min ${min} is above max ${max}; nothing would pass`,
        );
      }
      return {
        column,
        ...(min !== undefined ? { min } : {}),
        ...(max !== undefined ? { max } : {}),
      };
    }
    default:
      throw invalidArgument(
        `filter ${index} (${column}) has no condition: set equals, in or range`,
      );
  }
}
