import type { Command } from 'commander';
import {
  INGEST_FORMATS,
  type IngestFormat,
  type IngestFormatOption,
  invalidArgument,
  type NameOption,
} from '../../core/index.js';

/** Options whose flag is not their name in kebab case. */
const FLAG_NAMES: Readonly<Record<string, string>> = { declaredTypes: '--column' };

/**
 * The flag of an ingest option: its name in kebab case (`imageColumn` -> `--image-column`);
 * `declaredTypes` is `--column`. What the core's messages name options with, under `ingest`.
 */
export const ingestFlagOf: NameOption = (option) =>
  FLAG_NAMES[option] ?? `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

/** The flag with its value, as help and messages show it: `--parquet <file...>`. */
function flagSpec(option: IngestFormatOption): string {
  return `${ingestFlagOf(option.name)} ${option.value}`;
}

/** What the formats read, for the command's help: `an ImageFolder tree, ... or Parquet files`. */
export function formatTitles(): string {
  return orList(INGEST_FORMATS.map((f) => f.title));
}

function orList(items: readonly string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items.at(-1)}` : items.join('');
}

/** Adds every registered format's input flag (`--image-folder <root>`, `--parquet <file...>`...). */
export function addFormatInputOptions(cmd: Command): Command {
  for (const format of INGEST_FORMATS) cmd.option(flagSpec(format.input), format.input.description);
  return cmd;
}

/** Adds every registered format's own options (an option two formats share, once). */
export function addFormatOptions(cmd: Command): Command {
  const added = new Set<string>();
  for (const format of INGEST_FORMATS) {
    for (const option of format.options) {
      if (added.has(option.name)) continue;
      added.add(option.name);
      cmd.option(flagSpec(option), option.description);
    }
  }
  return cmd;
}

/** The one format whose input flag was given, and its input; none or several is an error. */
export function givenFormat(flags: Readonly<Record<string, unknown>>): {
  format: IngestFormat;
  input: string | string[];
} {
  const given = INGEST_FORMATS.filter((f) => flags[f.input.name] !== undefined);
  if (given.length !== 1) {
    const specs = INGEST_FORMATS.map((f) => flagSpec(f.input));
    throw invalidArgument(`give exactly one source: ${orList(specs)}`);
  }
  const format = given[0]!;
  return { format, input: flags[format.input.name] as string | string[] };
}

/** The given values of a format's own options, by option name. */
export function formatOptionValues(
  format: IngestFormat,
  flags: Readonly<Record<string, unknown>>,
): Record<string, string | undefined> {
  const values: Record<string, string | undefined> = {};
  for (const option of format.options) {
    const value = flags[option.name];
    if (value !== undefined) values[option.name] = String(value);
  }
  return values;
}
