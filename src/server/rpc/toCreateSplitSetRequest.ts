import type { CreateSplitsRequest__Output } from '../../generated/scylla_loader/v1/CreateSplitsRequest.js';
import type { MetadataFilter__Output } from '../../generated/scylla_loader/v1/MetadataFilter.js';
import {
  invalidArgument,
  splitRequestSchema,
  type CreateSplitSetRequest,
  type MetadataFilter,
  type ClassTargets,
} from '../../core/index.js';

/**
 * Turns a `CreateSplitsRequest` into what `createSplitSet` takes and checks it with the core's
 * one validator (`splitRequestSchema`), before any database work: a `ZodError` naming each
 * invalid field, which the gRPC layer answers with INVALID_ARGUMENT. Only what the wire format
 * allows but the core's request cannot even express is refused here: class ratios with another
 * target mode. A zero `max_total` means no limit, as proto3 has no absent number.
 *
 * @internal
 */
export function toCreateSplitSetRequest(req: CreateSplitsRequest__Output): CreateSplitSetRequest {
  // A uint64 beyond 2^53 becomes an inexact number, which the schema then refuses as too large.
  const maxTotal = Number(req.maxTotal);
  return splitRequestSchema.parse({
    dataset: req.dataset,
    name: req.name,
    parts: req.parts.map((p): [string, number] => [p.name, p.weight]),
    folds: req.folds,
    groupBy: [...req.groupBy],
    classTargets: classTargetsOf(req),
    ...(maxTotal > 0 ? { maxTotal } : {}),
    filters: req.filters.map(filterOf),
    seed: BigInt(req.seed),
    newVersion: req.newVersion,
    allowShortfall: req.allowShortfall,
  } satisfies CreateSplitSetRequest);
}

const CLASS_TARGET_MODES = [
  'CLASS_TARGET_MODE_UNSPECIFIED',
  'CLASS_TARGET_MODE_NATURAL',
  'CLASS_TARGET_MODE_BALANCED',
  'CLASS_TARGET_MODE_RATIOS',
];

function classTargetsOf(req: CreateSplitsRequest__Output): ClassTargets {
  // An unknown value (a newer client, or garbage) arrives as its number: refuse it rather than
  // split with natural proportions the caller did not ask for.
  if (!CLASS_TARGET_MODES.includes(String(req.classTargetMode))) {
    throw invalidArgument(
      `unknown class_target_mode ${String(req.classTargetMode)}; use one of ${CLASS_TARGET_MODES.join(', ')}`,
    );
  }
  const ratios = Object.fromEntries(Object.entries(req.classRatios));
  if (req.classTargetMode === 'CLASS_TARGET_MODE_RATIOS') return { mode: 'ratios', ratios };
  if (Object.keys(ratios).length > 0) {
    throw invalidArgument(
      'class_ratios are given but class_target_mode is not CLASS_TARGET_MODE_RATIOS; ' +
        'set it to use the ratios',
    );
  }
  return req.classTargetMode === 'CLASS_TARGET_MODE_BALANCED'
    ? { mode: 'balanced' }
    : { mode: 'natural' };
}

/** The filter's oneof as the core's shape; one without a condition is left for the schema. */
function filterOf(f: MetadataFilter__Output): MetadataFilter {
  const column = f.column;
  switch (f.condition) {
    case 'equals':
      return { column, equals: f.equals ?? '' };
    case 'in':
      return { column, in: [...(f.in?.values ?? [])] };
    case 'range': {
      const { min, max } = f.range ?? {};
      return {
        column,
        ...(min !== undefined ? { min } : {}),
        ...(max !== undefined ? { max } : {}),
      };
    }
    default:
      return { column };
  }
}
