import type { Command } from 'commander';
import { z } from 'zod';
import { invalidArgument } from '../../src/core/index.js';

/**
 * One flag of a bench command: its commander syntax, its help, the zod schema that takes the
 * flag's text (command line) or a value (code, tests, the suite) with errors naming the flag,
 * and its defaults in the full and the quick mode.
 */
export interface BenchFlag<T> {
  /** Commander syntax, e.g. `--batch-size <n>`. */
  syntax: string;
  help: string;
  schema: z.ZodType<T>;
  /** Value when the flag is not given; undefined: none. */
  full: T;
  /** Value under `--quick` when the flag is not given; default: `full`. */
  quick: T;
}

/** The flags of one bench command, by the name its settings use. */
export type BenchFlags = Record<string, BenchFlag<unknown>>;

/** What a caller may pass for each flag: its text or its value. */
export type FlagInput<S extends BenchFlags> = {
  [K in keyof S]?: (S[K] extends BenchFlag<infer T> ? T : never) | string;
};

/** The flags' values, defaults filled in. */
export type FlagValues<S extends BenchFlags> = {
  [K in keyof S]: S[K] extends BenchFlag<infer T> ? T : never;
};

/** A flag without a default (undefined when not given). */
export function flag<T>(
  syntax: string,
  help: string,
  schema: z.ZodType<T>,
): BenchFlag<T | undefined>;
/** A flag with a default, and another under `--quick` when `quick` is given. */
export function flag<T>(
  syntax: string,
  help: string,
  schema: z.ZodType<T>,
  full: T,
  quick?: T,
): BenchFlag<T>;
export function flag<T>(
  syntax: string,
  help: string,
  schema: z.ZodType<T>,
  full?: T,
  quick?: T,
): BenchFlag<T | undefined> {
  return { syntax, help, schema, full, quick: quick === undefined ? full : quick };
}

/** A number as given (from code) or from the flag's text (NaN when it is no number). */
function numberOf(value: number | string): number {
  return typeof value === 'number' ? value : value.trim() === '' ? NaN : Number(value);
}

/** A whole number from `min` to `max`; the error names `name` (a flag) and the value. */
export function wholeNumber(name: string, min: number, max: number): z.ZodType<number> {
  return z.union([z.number(), z.string()]).transform((value, ctx) => {
    const n = numberOf(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      const shown = typeof value === 'string' ? JSON.stringify(value) : String(value);
      ctx.addIssue({
        code: 'custom',
        message: `${name} must be a whole number from ${min} to ${max}, not ${shown}`,
      });
      return z.NEVER;
    }
    return n;
  });
}

/** A number above 0 (fractions allowed). */
export function positiveNumber(name: string): z.ZodType<number> {
  return z.union([z.number(), z.string()]).transform((value, ctx) => {
    const n = numberOf(value);
    if (!(n > 0) || !Number.isFinite(n)) {
      ctx.addIssue({ code: 'custom', message: `${name} ${JSON.stringify(value)}: expected > 0` });
      return z.NEVER;
    }
    return n;
  });
}

/** A number from 0 to `max` (fractions allowed): a share, e.g. `0.8`. */
export function share(name: string, max = 1): z.ZodType<number> {
  return z.union([z.number(), z.string()]).transform((value, ctx) => {
    const n = numberOf(value);
    if (!(n >= 0 && n <= max)) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} ${JSON.stringify(value)}: expected a number from 0 to ${max}`,
      });
      return z.NEVER;
    }
    return n;
  });
}

/** A comma-separated list (or an array) of whole numbers from `min` to `max`, at least one. */
export function wholeNumbers(name: string, min: number, max: number): z.ZodType<number[]> {
  const one = wholeNumber(name, min, max);
  return z.union([z.array(z.number()), z.string()]).transform((value, ctx) => {
    const list = typeof value === 'string' ? value.split(',') : value;
    if (list.length === 0)
      ctx.addIssue({ code: 'custom', message: `${name} needs at least one value` });
    const out: number[] = [];
    for (const item of list) {
      const parsed = one.safeParse(item);
      if (!parsed.success)
        ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]!.message });
      else out.push(parsed.data);
    }
    return out;
  });
}

/**
 * A comma-separated list (or an array) of `minCount` to `maxCount` numbers above 0 (fractions
 * allowed), e.g. the weights of a mixture; the error names `name` and the value.
 */
export function positiveNumbers(
  name: string,
  minCount: number,
  maxCount: number,
): z.ZodType<number[]> {
  const one = positiveNumber(name);
  return z.union([z.array(z.number()), z.string()]).transform((value, ctx) => {
    const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
    if (list.length < minCount || list.length > maxCount) {
      const shown = typeof value === 'string' ? value : value.join(',');
      ctx.addIssue({
        code: 'custom',
        message: `${name} ${JSON.stringify(shown)}: give ${minCount} to ${maxCount} comma-separated numbers above 0`,
      });
      return z.NEVER;
    }
    const out: number[] = [];
    for (const item of list) {
      const parsed = one.safeParse(item);
      if (!parsed.success) {
        ctx.addIssue({ code: 'custom', message: parsed.error.issues[0]!.message });
        return z.NEVER;
      }
      out.push(parsed.data);
    }
    return out;
  });
}

/**
 * A comma-separated subset (or an array) of `known`, duplicates dropped; an unknown name or
 * an empty list is an error naming the flag and the known names.
 */
export function names<T extends string>(
  name: string,
  known: readonly T[],
  noun: string,
): z.ZodType<T[]> {
  return z.union([z.array(z.string()), z.string()]).transform((value, ctx) => {
    const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
    const given = list.filter((s) => s !== '');
    if (given.length === 0 && typeof value !== 'string') {
      ctx.addIssue({ code: 'custom', message: `${name}: at least one ${noun} is needed` });
      return z.NEVER;
    }
    if (given.length === 0 || given.some((n) => !(known as readonly string[]).includes(n))) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} ${JSON.stringify(typeof value === 'string' ? value : value.join(','))}: use a comma-separated subset of ${known.join(', ')}`,
      });
      return z.NEVER;
    }
    return [...new Set(given)] as T[];
  });
}

/** One of `known`; anything else is an error naming the flag and the known values. */
export function choice<T extends string>(name: string, known: readonly T[]): z.ZodType<T> {
  return z.string().transform((value, ctx) => {
    if (!(known as readonly string[]).includes(value)) {
      ctx.addIssue({
        code: 'custom',
        message: `${name} ${JSON.stringify(value)}: use one of ${known.join(', ')}`,
      });
      return z.NEVER;
    }
    return value as T;
  });
}

/** Free text (a dataset name, a path). */
export const text = z.string();

/** On or off (a commander switch). */
export const onOff = z.boolean();

/**
 * Parses `input` against the flags once, with one zod object, and fills in the defaults of
 * the full or the quick mode. The first problem is INVALID_ARGUMENT with the flag's message.
 */
export function parseFlags<S extends BenchFlags>(
  spec: S,
  input: FlagInput<S>,
  quick = false,
): FlagValues<S> {
  const shape = Object.fromEntries(Object.entries(spec).map(([k, f]) => [k, f.schema.optional()]));
  const picked = Object.fromEntries(
    Object.keys(spec).map((k) => [k, (input as Record<string, unknown>)[k]]),
  );
  const parsed = z.object(shape).safeParse(picked);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0]);
    throw invalidArgument(
      issue.code === 'custom' || issue.message.startsWith('-')
        ? issue.message
        : `${spec[key]?.syntax ?? key}: ${issue.message}`,
    );
  }
  const values = parsed.data as Record<string, unknown>;
  return Object.fromEntries(
    Object.entries(spec).map(([k, f]) => [k, values[k] ?? (quick ? f.quick : f.full)]),
  ) as FlagValues<S>;
}

/** One value through its flag's schema, or INVALID_ARGUMENT with the schema's message. */
export function parseValue<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidArgument(parsed.error.issues[0]!.message);
  return parsed.data;
}

/** A default as the help shows it. */
function shown(value: unknown): string {
  return Array.isArray(value) ? value.join(',') : String(value);
}

/** Commander's name of a flag's value: `--no-mnist` -> `mnist`, `--batch-size <n>` -> `batchSize`. */
function attributeName(syntax: string): string {
  const long = syntax.split(/[ ,]/).find((s) => s.startsWith('--'))!;
  return long
    .slice(2)
    .replace(/^no-/, '')
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** Registers the flags on `cmd`, each help ending with its defaults. */
export function addFlags(cmd: Command, spec: BenchFlags): Command {
  for (const f of Object.values(spec)) {
    if (typeof f.full === 'boolean' || f.syntax.startsWith('--no-')) {
      cmd.option(f.syntax, f.help);
      continue;
    }
    const quick = shown(f.quick) === shown(f.full) ? '' : `; quick ${shown(f.quick)}`;
    cmd.option(
      f.syntax,
      f.full === undefined ? f.help : `${f.help} (default ${shown(f.full)}${quick})`,
    );
  }
  return cmd;
}

/** Commander's parsed options as the flags' input, under the spec's names. */
export function flagInput<S extends BenchFlags>(
  spec: S,
  options: Record<string, unknown>,
): FlagInput<S> {
  return Object.fromEntries(
    Object.entries(spec)
      .map(([k, f]) => [k, options[attributeName(f.syntax)]])
      .filter(([, v]) => v !== undefined),
  ) as FlagInput<S>;
}

/** `--docs <file.md>`: off by default, so quick runs never touch the docs. */
export const DOCS_FLAG = {
  docs: flag(
    '--docs <file.md>',
    "write this benchmark's table(s) with the date, command, commit and machine between its " +
      '<!-- bench:NAME:begin/end --> markers in a Markdown file (e.g. docs/performance.md)',
    text,
  ),
};

/** `--samples <n>`: distinct ~104 kB photo JPEGs in the dataset of a photo benchmark. */
export function samplesFlag(full: number, quick = 300): BenchFlag<number> {
  const schema = wholeNumber('--samples', 1, 10_000_000);
  return flag('--samples <n>', 'distinct ~104 kB photo JPEGs in the dataset', schema, full, quick);
}

/** `--runs <k>`: measured runs, interleaved; medians reported. */
export function runsFlag(of: string, full = 3, quick = 1, max = 1000): BenchFlag<number> {
  const help = `runs of every ${of}, interleaved; medians reported`;
  return flag('--runs <k>', help, wholeNumber('--runs', 1, max), full, quick);
}

/** `--batch-size <n>`. */
export function batchSizeFlag(full: number, quick = full): BenchFlag<number> {
  return flag(
    '--batch-size <n>',
    'samples per batch',
    wholeNumber('--batch-size', 1, 8192),
    full,
    quick,
  );
}

/** `--epochs <n>`. */
export function epochsFlag(of: string, full: number, quick = full): BenchFlag<number> {
  const help = `epochs ${of} streams per run`;
  return flag('--epochs <n>', help, wholeNumber('--epochs', 1, 100), full, quick);
}

/** `--dataset` and `--out-dir` of the benchmarks on `bench stream`'s photos. */
export const PHOTO_OUTPUT_FLAGS = {
  dataset: flag(
    '--dataset <name>',
    'dataset name (default that of bench stream for --samples)',
    text,
  ),
  outDir: flag('--out-dir <dir>', 'folder of the JSON report (default .state/bench)', text),
};

/** The defaults of {@link photoBenchFlags}. */
export interface PhotoBenchDefaults {
  samples: number;
  quickSamples?: number;
  /** What a run measures once, e.g. `leg` ("runs of every leg"). */
  runsOf: string;
  runs?: number;
  quickRuns?: number;
  maxRuns?: number;
  batchSize: number;
  quickBatchSize?: number;
}

/**
 * The flags every benchmark on `bench stream`'s photos has: `--samples`, `--runs`,
 * `--batch-size`, `--dataset` and `--out-dir`, with the benchmark's defaults.
 */
export function photoBenchFlags(d: PhotoBenchDefaults): {
  samples: BenchFlag<number>;
  runs: BenchFlag<number>;
  batchSize: BenchFlag<number>;
} & typeof PHOTO_OUTPUT_FLAGS {
  return {
    samples: samplesFlag(d.samples, d.quickSamples),
    runs: runsFlag(d.runsOf, d.runs, d.quickRuns, d.maxRuns),
    batchSize: batchSizeFlag(d.batchSize, d.quickBatchSize),
    ...PHOTO_OUTPUT_FLAGS,
  };
}
