import type { SchemaFacts } from './schemaFacts.js';

/**
 * One setting of a command, declared once: its flag, its environment variable, its unit and
 * its help. The command's zod schema stays the single judge of valid values and the source of
 * defaults; the CLI options, the messages that name a setting, the configuration docs table and
 * the check of the Kubernetes ConfigMap are all derived from these declarations
 * (see `settingOptions.ts`, `settingsTable.ts`).
 */
export interface Setting {
  /**
   * Where the value lands in the command's configuration, as a dotted path (`port`,
   * `db.requestTimeoutMs`); also how a schema error finds its setting. Absent for a setting the
   * command composes itself (TLS files, routes), which names its own path in `paths`.
   */
  field?: string;
  /** Other configuration paths whose errors belong to this setting (`tls.certFile`). */
  paths?: readonly string[];
  /** The long flag with its argument as Commander takes it (`--grpc-port <n>`); absent: none. */
  flag?: string;
  /** The environment variable; absent: the flag only. */
  env?: string;
  /**
   * How the text becomes a value: `number` (whole text, else NaN for the schema to refuse),
   * `text`, `choice` (one of the schema's values), `switch` (a flag without a value; its
   * variable is read as yes/no, since Commander would take `false` as on), `list` (comma
   * separated), `yes-no` (variable only).
   */
  type: 'number' | 'text' | 'choice' | 'switch' | 'list' | 'yes-no';
  /** Unit of a number, shown in the docs (`ms`, `bytes`, `samples`...). */
  unit?: string;
  /** What it does, one sentence; the default is appended from the schema. */
  help: string;
  /** The default as shown when the schema has none (`off`, `the local node`). */
  defaultText?: string;
  /** Allowed values of a `choice` that has no field (else the schema's enum). */
  choices?: readonly string[];
  /** A secret: never shown with its value. */
  secret?: boolean;
}

/** Commander's attribute name for a long flag: `--max-in-flight <n>` → `maxInFlight`. */
export function flagAttribute(flag: string): string {
  return flag
    .split(' ')[0]!
    .slice(2)
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The flag without its argument: `--grpc-port <n>` → `--grpc-port`. */
export function flagName(flag: string): string {
  return flag.split(' ')[0]!;
}

/** How a message names a setting: `--grpc-port (SCYLLA_LOADER_GRPC_PORT)`. */
export function settingName(setting: Setting): string {
  if (setting.flag === undefined) return setting.env ?? setting.field ?? 'setting';
  const flag = flagName(setting.flag);
  return setting.env === undefined ? flag : `${flag} (${setting.env})`;
}

/**
 * The setting a schema error path belongs to (`['db', 'port']` → `--port`), or undefined. The
 * longest declared path that starts the error's path wins.
 */
export function settingOfPath(
  settings: readonly Setting[],
  path: readonly PropertyKey[],
): Setting | undefined {
  const text = path.map(String).join('.');
  let best: { setting: Setting; length: number } | undefined;
  for (const setting of settings) {
    for (const p of [setting.field, ...(setting.paths ?? [])]) {
      if (p === undefined || !(text === p || text.startsWith(`${p}.`))) continue;
      if (best === undefined || p.length > best.length) best = { setting, length: p.length };
    }
  }
  return best?.setting;
}

/** A setting's default as shown in help and docs: `defaultText`, else the schema's. */
export function defaultShown(setting: Setting, facts: SchemaFacts): string | undefined {
  if (setting.defaultText !== undefined) return setting.defaultText;
  const value = setting.field === undefined ? undefined : facts(setting.field)?.default;
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.join(',');
  return String(value);
}

/** The values a setting may take: its own list, else the schema's enum of its field. */
export function choicesOf(setting: Setting, facts: SchemaFacts): readonly string[] | undefined {
  if (setting.choices) return setting.choices;
  const values = setting.field === undefined ? undefined : facts(setting.field)?.enum;
  return values?.map(String);
}
