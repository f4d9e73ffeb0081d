import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { serveCommand, serveConfigFromFlags } from '../../src/cli/commands/serve.js';
import { SERVE_SETTINGS, serveSettingNames } from '../../src/cli/settings/serveSettings.js';
import { SERVE_SETTING_NAMES } from '../../src/server/config/serveSettingNames.js';
import { schemaFacts } from '../../src/cli/settings/schemaFacts.js';
import { serverConfigSchema, type ServerConfig } from '../../src/server/config/serverConfig.js';
import { CONFIGURATION_PAGE, regenerate, staleBlocks } from '../../scripts/docs/settingsDocs.js';
import { markedBlock, replaceMarkedBlock } from '../../scripts/docs/markedBlock.js';

const facts = schemaFacts(serverConfigSchema);
const saved = { ...process.env };

afterEach(() => {
  process.env = { ...saved };
});

/** `serve`'s configuration from a command line and an environment, as the CLI makes it. */
function serveConfig(argv: string[], env: Record<string, string> = {}): ServerConfig {
  for (const key of Object.keys(process.env)) {
    if (key.startsWith('SCYLLA_LOADER_')) delete process.env[key];
  }
  Object.assign(process.env, env);
  const cmd = serveCommand().exitOverride();
  cmd.parse(argv, { from: 'user' });
  return serveConfigFromFlags(cmd.opts(), process.env);
}

/** The value at a dotted path of a configuration. */
function valueAt(config: unknown, field: string): unknown {
  return field.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown>)?.[k], config);
}

/** Every leaf field of the schema's JSON Schema, as dotted paths. */
function leafFields(node: unknown, prefix = ''): string[] {
  const n = node as { properties?: Record<string, unknown>; anyOf?: unknown[] };
  const object = n.properties ? n : (n.anyOf?.find((x) => (x as typeof n).properties) as typeof n);
  if (!object?.properties) return [prefix];
  return Object.entries(object.properties).flatMap(([key, child]) =>
    leafFields(child, prefix === '' ? key : `${prefix}.${key}`),
  );
}

describe('serve settings, declared once', () => {
  it("name the core's settings in the server's messages as the CLI declares them", () => {
    expect(SERVE_SETTING_NAMES).toEqual(serveSettingNames());
    expect(serveSettingNames().cacheDir).toBe('--cache-dir (SCYLLA_LOADER_CACHE_DIR)');
  });

  it('declare every field of the configuration schema, each flag and variable once', () => {
    const declared = SERVE_SETTINGS.flatMap((s) => [s.field, ...(s.paths ?? [])]);
    const json = z.toJSONSchema(serverConfigSchema, { io: 'input', unrepresentable: 'any' });
    // extraPaths' items and tls's files are declared as a whole or one by one.
    const undeclared = leafFields(json).filter(
      (f) => !declared.some((d) => d !== undefined && (f === d || f.startsWith(`${d}.`))),
    );
    expect(undeclared).toEqual([]);
    for (const field of declared.filter((d) => d !== undefined)) {
      expect(facts(field), field).toBeDefined();
    }
    const flags = SERVE_SETTINGS.flatMap((s) => (s.flag ? [s.flag.split(' ')[0]] : []));
    const envs = SERVE_SETTINGS.flatMap((s) => (s.env ? [s.env] : []));
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(envs).size).toBe(envs.length);
  });

  it('take each number from its flag and from its variable into its field', () => {
    const numbers = SERVE_SETTINGS.filter((s) => s.type === 'number');
    expect(numbers.length).toBeGreaterThan(20);
    for (const setting of numbers) {
      const f = facts(setting.field!)!;
      // A valid value other than the default: the minimum, or one above it when that is it.
      const value = f.minimum === f.default ? (f.minimum as number) + 1 : (f.minimum ?? 1);
      const byFlag = serveConfig([setting.flag!.split(' ')[0]!, String(value)]);
      expect(valueAt(byFlag, setting.field!), setting.flag).toBe(value);
      const byEnv = serveConfig([], { [setting.env!]: String(value) });
      expect(valueAt(byEnv, setting.field!), setting.env).toBe(value);
    }
  });

  it('name the flag and variable of a refused value, never the field', () => {
    for (const setting of SERVE_SETTINGS.filter((s) => s.type === 'number')) {
      const min = facts(setting.field!)!.minimum as number;
      expect(() => serveConfig([setting.flag!.split(' ')[0]!, String(min - 1)])).toThrow(
        `invalid serve configuration\n  ${setting.flag!.split(' ')[0]} (${setting.env}): `,
      );
    }
    expect(() => serveConfig(['--tls-cert', 'c.pem'])).toThrow(
      /--tls-key \(SCYLLA_LOADER_TLS_KEY\)/,
    );
    expect(() => serveConfig(['--group-reads', 'sometimes'])).toThrow(
      /Allowed choices are auto, on, off/,
    );
  });

  it('show the schema defaults in the help', () => {
    const help = serveCommand().helpInformation();
    for (const setting of SERVE_SETTINGS.filter((s) => s.flag && s.type === 'number')) {
      expect(help).toContain(setting.flag!);
      expect(help.replace(/\s+/g, ' ')).toContain(
        `(default ${String(facts(setting.field!)!.default)})`,
      );
    }
  });
});

describe('docs/configuration.md', () => {
  it('holds the settings table generated from the declarations (npm run docs:settings)', () => {
    const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
    expect(staleBlocks(page)).toEqual([]);
    expect(regenerate(page)).toBe(page);
    for (const setting of SERVE_SETTINGS) {
      if (setting.env) expect(markedBlock(page, 'settings:serve')).toContain(`\`${setting.env}\``);
    }
  });

  it('would be found stale after a declaration changes', () => {
    const page = readFileSync(CONFIGURATION_PAGE, 'utf8');
    const edited = replaceMarkedBlock(page, 'settings:serve', '| flag |\n|---|\n');
    expect(staleBlocks(edited)).toEqual(['settings:serve']);
  });

  it('keeps everything outside the markers byte for byte and refuses bad markers', () => {
    const text = 'a\r\n<!-- k:begin -->\r\nold\r\n<!-- k:end -->\r\nz';
    expect(replaceMarkedBlock(text, 'k', 'new\n')).toBe(
      'a\r\n<!-- k:begin -->\r\nnew\r\n<!-- k:end -->\r\nz',
    );
    expect(() => replaceMarkedBlock('<!-- k:end -->\n<!-- k:begin -->\n', 'k', '')).toThrow(
      /comes before/,
    );
    expect(() => replaceMarkedBlock('x', 'k', '')).toThrow(/found 0/);
  });
});
