import { type Command, Option } from 'commander';
import { ZodError } from 'zod';
import { invalidArgument } from '../../core/index.js';
import {
  type Setting,
  choicesOf,
  defaultShown,
  flagAttribute,
  settingName,
  settingOfPath,
} from './Setting.js';
import type { SchemaFacts } from './schemaFacts.js';

/** Flag values as Commander hands them over: text, or true for a switch. */
export type FlagValues = Record<string, unknown>;

/**
 * Adds a Commander option for every setting with a flag: its help with the default appended,
 * its variable (except for a switch, whose variable is read as yes/no by the command), its
 * choices.
 */
export function addSettingOptions(
  cmd: Command,
  settings: readonly Setting[],
  facts: SchemaFacts,
): Command {
  for (const setting of settings) {
    if (setting.flag === undefined) continue;
    const shown = defaultShown(setting, facts);
    const variable =
      setting.type === 'switch' && setting.env !== undefined ? `; env ${setting.env}=true` : '';
    const option = new Option(
      setting.flag,
      `${setting.help}${shown === undefined ? '' : ` (default ${shown}${variable})`}`,
    );
    if (setting.type !== 'switch' && setting.env !== undefined) option.env(setting.env);
    const choices = choicesOf(setting, facts);
    if (choices) option.choices([...choices]);
    cmd.addOption(option);
  }
  return cmd;
}

/**
 * The flag values of settings read from an environment, as Commander would have filled them
 * (for code that builds a configuration without a command line: tests, child processes).
 */
export function flagValuesFromEnv(
  settings: readonly Setting[],
  env: NodeJS.ProcessEnv,
): FlagValues {
  const values: FlagValues = {};
  for (const setting of settings) {
    if (setting.flag === undefined || setting.env === undefined) continue;
    if (setting.type === 'switch') continue;
    const text = env[setting.env];
    if (text !== undefined && text !== '') values[flagAttribute(setting.flag)] = text;
  }
  return values;
}

/**
 * The raw configuration of the settings that map straight to a field (numbers, text, choices,
 * lists), nested by their dotted paths; the schema then checks and completes it.
 */
export function rawFromFlags(
  settings: readonly Setting[],
  flags: FlagValues,
): Record<string, unknown> {
  const raw: Record<string, unknown> = {};
  for (const setting of settings) {
    if (setting.flag === undefined || setting.field === undefined) continue;
    const text = flags[flagAttribute(setting.flag)];
    if (typeof text !== 'string') continue;
    // An empty variable (`SCYLLA_LOADER_DB_TLS_CA=`) unsets text; a blank number is refused.
    if (text === '' && setting.type !== 'number') continue;
    setAt(raw, setting.field, parseText(setting, text));
  }
  return raw;
}

/** Reads a yes/no variable: undefined when unset, INVALID_ARGUMENT naming it when neither. */
export function yesNo(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw invalidArgument(`${name} must be true or false, not ${JSON.stringify(env[name])}`);
}

/**
 * Parses a configuration with its schema; a refusal becomes INVALID_ARGUMENT listing each
 * problem by the flag and variable that set it, never by an internal field name.
 */
export function parseSettings<T>(what: string, settings: readonly Setting[], parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (!(err instanceof ZodError)) throw err;
    const lines = err.issues.map((i) => `  ${describePath(settings, i.path)}: ${i.message}`);
    throw invalidArgument(`invalid ${what}\n${lines.join('\n')}`, err);
  }
}

function describePath(settings: readonly Setting[], path: readonly PropertyKey[]): string {
  const setting = settingOfPath(settings, path);
  if (setting === undefined) return path.map(String).join('.') || 'configuration';
  const declared = [setting.field, ...(setting.paths ?? [])].find((p) => p !== undefined);
  const depth = declared === undefined ? path.length : declared.split('.').length;
  const rest = setting.type === 'list' ? path.slice(depth).map(String).join('.') : '';
  return rest === '' ? settingName(setting) : `${settingName(setting)} ${rest}`;
}

function parseText(setting: Setting, text: string): unknown {
  switch (setting.type) {
    case 'number':
      // Whole text as a number; blank or partly numeric text is NaN, which the schema refuses.
      return text.trim() === '' ? Number.NaN : Number(text);
    case 'list':
      return text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return text;
  }
}

function setAt(target: Record<string, unknown>, field: string, value: unknown): void {
  const keys = field.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]!] = value;
}
