import { z } from 'zod';
import { LoaderError } from '../errors/LoaderError.js';
import { validateIdentifier } from '../schema/identifiers.js';
import type { MetadataFilter } from './MetadataFilter.js';
import { validateSplitName } from './splitNames.js';

/** Largest k of a k-fold split set. */
export const MAX_FOLDS = 100;

/** Part names a k-fold set serves for every fold; a set of named parts may not use them. */
const FOLD_VIEW = /^(train|val)-\d+$/;

/**
 * A string checked by one of the core's name rules, with that rule's message, so a name is
 * judged the same here as everywhere else it is used.
 */
function named(check: (value: string) => unknown) {
  return z.string().superRefine((value, ctx) => {
    try {
      check(value);
    } catch (err) {
      if (!(err instanceof LoaderError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.message });
    }
  });
}

const filterSchema = z
  .object({
    column: named((c) => validateIdentifier(c, 'metadata column')),
    equals: z.string().optional(),
    in: z.array(z.string()).min(1, '"in" needs at least one value').optional(),
    min: z.number({ error: 'range min must be a finite number' }).optional(),
    max: z.number({ error: 'range max must be a finite number' }).optional(),
  })
  .superRefine((f, ctx) => {
    const kinds = [
      f.equals !== undefined,
      f.in !== undefined,
      f.min !== undefined || f.max !== undefined,
    ].filter(Boolean).length;
    if (kinds !== 1) {
      ctx.addIssue({
        code: 'custom',
        message:
          `filter on ${f.column} needs exactly one condition: equals, in, or a range with a ` +
          'min and/or a max',
      });
    }
    if (f.min !== undefined && f.max !== undefined && f.min > f.max) {
      ctx.addIssue({
        code: 'custom',
        path: ['min'],
        message: `range min ${f.min} is above max ${f.max}, so no sample would pass`,
      });
    }
  })
  .transform((f): MetadataFilter => {
    if (f.equals !== undefined) return { column: f.column, equals: f.equals };
    if (f.in !== undefined) return { column: f.column, in: f.in };
    return {
      column: f.column,
      ...(f.min !== undefined ? { min: f.min } : {}),
      ...(f.max !== undefined ? { max: f.max } : {}),
    };
  });

const classTargetsSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('natural') }),
  z.object({ mode: z.literal('balanced') }),
  z.object({
    mode: z.literal('ratios'),
    ratios: z
      .record(
        z.string().regex(/^-?\d+$/, 'a class ratio is keyed by an integer label'),
        z.number({ error: 'a class ratio must be a finite number' }),
      )
      .superRefine((ratios, ctx) => {
        const named = Object.entries(ratios);
        if (named.length === 0) {
          ctx.addIssue({
            code: 'custom',
            message: 'ratios must name at least one label (e.g. 0=1,1=1)',
          });
        }
        for (const [label, ratio] of named) {
          if (!(ratio > 0)) {
            ctx.addIssue({
              code: 'custom',
              path: [label],
              message: `class ratio of label ${label} must be positive, got ${ratio}`,
            });
          }
        }
      }),
  }),
]);

/**
 * The one validator of a split set request (`CreateSplitSetRequest`), used by `createSplitSet`
 * itself and by the front-ends that build a request (the CLI's `splits create`, the
 * CreateSplits RPC) before any database work. Each issue names its field, e.g.
 * `parts.1.0` or `filters.0.min`; the gRPC layer answers INVALID_ARGUMENT with them.
 *
 * It checks what the request alone can tell: names (dataset, set, parts, columns) by the core's
 * rules; positive, finite weights and class ratios; parts or 2..{@link MAX_FOLDS} folds, not
 * both; part names neither repeated nor reserved for k-fold views (`train-<i>`, `val-<i>`);
 * group-by columns not repeated; a filter with exactly one condition, a non-empty `in` and a
 * range whose min is not above its max; a positive safe-integer size cap; a 64-bit unsigned
 * seed. What needs the dataset (do the columns exist, is a range's column numeric, does a
 * labelled ratio have samples, can the targets be met) is checked against the stored schema
 * before the metadata scan, by `readSplitInput` and `assignSplits`.
 */
export const splitRequestSchema = z
  .object({
    dataset: named((d) => validateIdentifier(d, 'dataset')),
    name: named((n) => validateSplitName(n, 'split set')),
    parts: z.array(
      z.tuple([
        named((p) => validateSplitName(p, 'part')),
        z.number({ error: 'a part weight must be a finite number' }),
      ]),
    ),
    folds: z
      .number()
      .int('folds must be an integer')
      .min(0, 'folds must not be negative')
      .max(MAX_FOLDS, `folds is at most ${MAX_FOLDS}`)
      .refine((k) => k !== 1, 'k-fold needs at least 2 folds (0 means named parts)'),
    groupBy: z.array(named((c) => validateIdentifier(c, 'metadata column'))),
    classTargets: classTargetsSchema,
    maxTotal: z
      .number()
      .min(1, 'max total must be at least 1')
      .max(Number.MAX_SAFE_INTEGER, `max total is at most ${Number.MAX_SAFE_INTEGER}`)
      // Not .int(): it also refuses integers beyond 2^53, which the max above words better.
      .refine(Number.isInteger, 'max total must be an integer')
      .optional(),
    filters: z.array(filterSchema),
    seed: z
      .bigint()
      .min(0n, 'seed must not be negative')
      .max(2n ** 64n - 1n, 'seed must fit in 64 bits (at most 2^64 - 1)'),
    newVersion: z.boolean(),
    allowShortfall: z.boolean(),
  })
  .superRefine((req, ctx) => {
    if (req.folds > 0 && req.parts.length > 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['folds'],
        message: 'give either parts or folds, not both',
      });
    }
    if (req.folds === 0 && req.parts.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['parts'],
        message: 'give the parts with their weights (e.g. train=7,val=2,test=1) or k >= 2 folds',
      });
    }
    const parts = new Set<string>();
    req.parts.forEach(([part, weight], i) => {
      if (!(weight > 0)) {
        ctx.addIssue({
          code: 'custom',
          path: ['parts', i, 1],
          message: `part ${part} needs a positive weight, got ${weight}`,
        });
      }
      if (parts.has(part)) {
        ctx.addIssue({
          code: 'custom',
          path: ['parts', i, 0],
          message: `part ${part} is named twice`,
        });
      } else if (FOLD_VIEW.test(part)) {
        ctx.addIssue({
          code: 'custom',
          path: ['parts', i, 0],
          message: `part name ${part} is reserved for the views of k-fold sets; pick another`,
        });
      }
      parts.add(part);
    });
    const columns = new Set<string>();
    req.groupBy.forEach((column, i) => {
      if (columns.has(column)) {
        ctx.addIssue({
          code: 'custom',
          path: ['groupBy', i],
          message: `group-by column ${column} is named twice`,
        });
      }
      columns.add(column);
    });
  });
