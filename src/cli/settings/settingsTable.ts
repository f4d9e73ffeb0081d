import { type Setting, choicesOf, defaultShown, flagName } from './Setting.js';
import type { FieldFacts, SchemaFacts } from './schemaFacts.js';

/**
 * The Markdown table of a command's settings: flag, variable, default, allowed values and
 * unit, what it does. Everything comes from the declarations and the schema, so the table in
 * docs/configuration.md is generated (`npm run docs:settings`), never typed.
 */
export function settingsTable(settings: readonly Setting[], facts: SchemaFacts): string {
  const rows = settings.map((setting) => {
    const field = setting.field === undefined ? undefined : facts(setting.field);
    const choices = choicesOf(setting, facts);
    const range = choices !== undefined ? choices.join(', ') : rangeOf(field);
    const shown = defaultShown(setting, facts);
    return [
      setting.flag === undefined ? '' : code(flagName(setting.flag)),
      setting.env === undefined ? '' : code(setting.env),
      shown === undefined ? '' : setting.defaultText === undefined ? code(shown) : shown,
      [range, setting.unit].filter(Boolean).join(' '),
      setting.help.replace(/\|/g, '\\|') + (setting.secret ? ' (secret: never logged)' : ''),
    ];
  });
  return [
    '| flag | environment variable | default | values | what it does |',
    '|---|---|---|---|---|',
    ...rows.map((cells) => `| ${cells.join(' | ')} |`),
  ].join('\n');
}

/** `1–64`, or `≥ 1000` for a number the schema bounds only below. */
function rangeOf(field: FieldFacts | undefined): string {
  const max = field?.maximum;
  const bounded = max !== undefined && max < Number.MAX_SAFE_INTEGER;
  if (field?.minimum === undefined) return bounded ? `≤ ${max}` : '';
  return bounded ? `${field.minimum}–${max}` : `≥ ${field.minimum}`;
}

function code(text: string): string {
  return `\`${text}\``;
}
