import { status } from '@grpc/grpc-js';
import { ZodError } from 'zod';
import {
  describeInvalidRequest,
  splitRequestSchema,
  type CreateSplitSetRequest,
} from '../core/requests.js';
import { ClientError } from './ClientError.js';
import type { CreateSplitsOptions, SplitFilter } from './CreateSplitsOptions.js';

/**
 * Refuses a split set request the server would refuse for what the request alone shows (names,
 * weights, ratios, folds, filters, seed), before it is sent: with the core's one validator, so
 * the SDK judges exactly as the server does and says it in the same words. Throws a
 * {@link ClientError} INVALID_ARGUMENT naming each field, as the server's answer would be.
 * What needs the dataset (columns, reachable targets) is still the server's to judge.
 *
 * @internal
 */
export function checkCreateSplits(options: CreateSplitsOptions, path: string): void {
  const parsed = splitRequestSchema.safeParse(asCoreRequest(options));
  if (parsed.success) return;
  const err: ZodError = parsed.error;
  throw new ClientError(path, status.INVALID_ARGUMENT, describeInvalidRequest(err), {
    cause: err,
  });
}

/** The SDK's options as the core's request, with the server's defaults for what is absent. */
function asCoreRequest(options: CreateSplitsOptions): CreateSplitSetRequest {
  const groupBy = options.groupBy ?? [];
  const maxTotal = options.maxTotal ?? 0;
  return {
    dataset: options.dataset,
    name: options.name,
    parts: Object.entries(options.parts ?? {}),
    folds: options.folds ?? 0,
    groupBy: typeof groupBy === 'string' ? [groupBy] : [...groupBy],
    classTargets: classTargetsOf(options.classTargets),
    ...(maxTotal > 0 ? { maxTotal } : {}),
    filters: (options.filters ?? []).map(filterOf),
    seed: BigInt(options.seed ?? 0),
    newVersion: options.newVersion ?? false,
    allowShortfall: options.allowShortfall ?? false,
  };
}

function classTargetsOf(
  option: CreateSplitsOptions['classTargets'],
): CreateSplitSetRequest['classTargets'] {
  if (option === undefined || option === 'natural') return { mode: 'natural' };
  if (option === 'balanced') return { mode: 'balanced' };
  return {
    mode: 'ratios',
    ratios: Object.fromEntries(Object.entries(option.ratios).map(([k, v]) => [String(k), v])),
  };
}

function filterOf(filter: SplitFilter): CreateSplitSetRequest['filters'][number] {
  const { column } = filter;
  if ('equals' in filter) return { column, equals: String(filter.equals) };
  if ('in' in filter) return { column, in: filter.in.map(String) };
  return {
    column,
    ...(filter.min !== undefined ? { min: filter.min } : {}),
    ...(filter.max !== undefined ? { max: filter.max } : {}),
  };
}
