import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  addDbOptions,
  dbConfigFromEnv,
  dbConfigFromFlags,
  type DbFlags,
  DB_SETTINGS,
  dbSettingNames,
} from '../../src/cli/dbOptions.js';
import { serveSettingNames } from '../../src/cli/settings/serveSettings.js';
import { LoaderError, dbConfigSchema, type DbSetting } from '../../src/core/index.js';
import { dbConnectError } from '../../src/core/db/dbConnectError.js';
import { driverTlsOptions } from '../../src/core/db/driverTlsOptions.js';
import { SERVE_SETTING_NAMES } from '../../src/server/config/serveSettingNames.js';
import { renderCassandraYaml } from '../../src/devdb/cassandraYaml.js';
import { clusterSpecSchema } from '../../src/devdb/clusterSpec.js';
import { nodeLayouts } from '../../src/devdb/nodeLayout.js';

let dir: string;
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sl-dbsec-unit-'));
  await writeFile(path.join(dir, 'password'), 's3cret-from-file\n');
  await writeFile(path.join(dir, 'empty'), '');
  await writeFile(path.join(dir, 'ca.pem'), PEM);
  await writeFile(path.join(dir, 'ca.der'), Buffer.from([0x30, 0x82, 0x01, 0x0a]));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('database password from the environment', () => {
  it('reads SCYLLA_LOADER_DB_PASSWORD_FILE without its trailing newline', () => {
    const config = dbConfigFromEnv({
      SCYLLA_LOADER_DB_USERNAME: 'loader',
      SCYLLA_LOADER_DB_PASSWORD_FILE: path.join(dir, 'password'),
    });
    expect(config.username).toBe('loader');
    expect(config.password).toBe('s3cret-from-file');
  });

  it('refuses both password variables at once, an unreadable file and an empty one', () => {
    const file = path.join(dir, 'password');
    expect(() =>
      dbConfigFromEnv({
        SCYLLA_LOADER_DB_PASSWORD: 'x',
        SCYLLA_LOADER_DB_PASSWORD_FILE: file,
      }),
    ).toThrow(/both SCYLLA_LOADER_DB_PASSWORD and SCYLLA_LOADER_DB_PASSWORD_FILE/);
    expect(() =>
      dbConfigFromEnv({ SCYLLA_LOADER_DB_PASSWORD_FILE: path.join(dir, 'missing') }),
    ).toThrow(
      /cannot read the database password file .*missing \(SCYLLA_LOADER_DB_PASSWORD_FILE\): ENOENT/,
    );
    expect(() =>
      dbConfigFromEnv({ SCYLLA_LOADER_DB_PASSWORD_FILE: path.join(dir, 'empty') }),
    ).toThrow(/is empty/);
  });
});

describe('database TLS from the environment', () => {
  it('is off unless asked for', () => {
    expect(dbConfigFromEnv({}).tls).toBeUndefined();
    expect(dbConfigFromEnv({ SCYLLA_LOADER_DB_TLS: 'false' }).tls).toBeUndefined();
  });

  it('is on with SCYLLA_LOADER_DB_TLS=true or a CA file, host names checked by default', () => {
    expect(dbConfigFromEnv({ SCYLLA_LOADER_DB_TLS: 'true' }).tls).toEqual({
      verifyHostname: true,
    });
    expect(
      dbConfigFromEnv({
        SCYLLA_LOADER_DB_TLS_CA: '/ca.pem',
        SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME: 'false',
      }).tls,
    ).toEqual({ caFile: '/ca.pem', verifyHostname: false });
  });

  it('refuses a yes/no variable that is neither, and a certificate without its key', () => {
    expect(() => dbConfigFromEnv({ SCYLLA_LOADER_DB_TLS: 'maybe' })).toThrow(
      /SCYLLA_LOADER_DB_TLS must be true or false/,
    );
    expect(() => dbConfigFromEnv({ SCYLLA_LOADER_DB_TLS_CERT: '/c.pem' })).toThrow(
      /SCYLLA_LOADER_DB_TLS_KEY/,
    );
  });
});

describe('--db-tls flags', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  function parse(argv: string[]): DbFlags {
    const cmd = addDbOptions(new Command('x').exitOverride());
    cmd.parse(argv, { from: 'user' });
    return cmd.opts<DbFlags>();
  }

  it('turn TLS on and override the environment one setting at a time', () => {
    for (const key of Object.keys(process.env)) {
      if (key.startsWith('SCYLLA_LOADER_')) delete process.env[key];
    }
    expect(dbConfigFromFlags(parse([])).tls).toBeUndefined();
    expect(dbConfigFromFlags(parse(['--db-tls'])).tls).toEqual({ verifyHostname: true });
    process.env.SCYLLA_LOADER_DB_TLS_CA = '/env-ca.pem';
    expect(dbConfigFromFlags(parse(['--db-tls-no-verify-hostname'])).tls).toEqual({
      caFile: '/env-ca.pem',
      verifyHostname: false,
    });
    expect(dbConfigFromFlags(parse(['--db-tls-ca', '/flag-ca.pem'])).tls?.caFile).toBe(
      '/flag-ca.pem',
    );
  });
});

describe('driverTlsOptions', () => {
  it('always checks the chain (the driver would not), and the host name unless told not to', () => {
    const checked = driverTlsOptions({ caFile: path.join(dir, 'ca.pem'), verifyHostname: true });
    expect(checked.rejectUnauthorized).toBe(true);
    expect(String(checked.ca)).toBe(PEM);
    expect(checked.checkServerIdentity).toBeUndefined();
    const unchecked = driverTlsOptions({ verifyHostname: false });
    expect(unchecked.rejectUnauthorized).toBe(true);
    expect(unchecked.checkServerIdentity?.('h', {} as never)).toBeUndefined();
  });

  it('names the setting of a missing or non-PEM file as the CLI names it', () => {
    const missing = (): unknown =>
      driverTlsOptions(
        { caFile: path.join(dir, 'nope.pem'), verifyHostname: true },
        dbSettingNames(),
      );
    expect(missing).toThrow(LoaderError);
    expect(missing).toThrow(/--db-tls-ca \(SCYLLA_LOADER_DB_TLS_CA\): ENOENT/);
    expect(() =>
      driverTlsOptions(
        {
          certFile: path.join(dir, 'ca.der'),
          keyFile: path.join(dir, 'ca.pem'),
          verifyHostname: true,
        },
        dbSettingNames(),
      ),
    ).toThrow(/given as --db-tls-cert \(SCYLLA_LOADER_DB_TLS_CERT\), is not a PEM file/);
  });

  it('names the field to a library caller, never a flag or variable', () => {
    const missing = (): unknown =>
      driverTlsOptions({ caFile: path.join(dir, 'nope.pem'), verifyHostname: true });
    expect(missing).toThrow(/, given as tls\.caFile: ENOENT$/);
    expect(() =>
      driverTlsOptions({
        certFile: path.join(dir, 'ca.der'),
        keyFile: path.join(dir, 'ca.pem'),
        verifyHostname: true,
      }),
    ).toThrow(/given as tls\.certFile, is not a PEM file/);
  });
});

describe('database setting names', () => {
  it("are the CLI's declarations, flag then variable, and serve's the same", () => {
    const names = dbSettingNames();
    for (const [field, name] of Object.entries(names) as [DbSetting, string][]) {
      const setting = DB_SETTINGS.find((s) => s.field === `db.${field}`)!;
      expect(setting, field).toBeDefined();
      if (setting.flag)
        expect(name.startsWith(`${setting.flag.split(' ')[0]} (`), field).toBe(true);
      expect(name, field).toContain(setting.env!);
    }
    expect(names['tls.caFile']).toBe('--db-tls-ca (SCYLLA_LOADER_DB_TLS_CA)');
    expect(names.tls).toBe('--db-tls (SCYLLA_LOADER_DB_TLS=true)');
    expect(names['tls.verifyHostname']).toBe(
      '--db-tls-no-verify-hostname (SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME=false)',
    );
    expect(names.password).toBe('SCYLLA_LOADER_DB_PASSWORD (or SCYLLA_LOADER_DB_PASSWORD_FILE)');
    expect(serveSettingNames()).toMatchObject(names);
    expect(SERVE_SETTING_NAMES).toMatchObject(names);
  });

  it('name a certificate without its key by field to a library caller, by flag to the CLI', () => {
    const parsed = dbConfigSchema.safeParse({ tls: { certFile: '/c.pem' } });
    expect(parsed.error?.issues[0]?.message).toBe(
      'a client certificate needs its key and the reverse: set both tls.certFile and ' +
        'tls.keyFile, or neither',
    );
    expect(() => dbConfigFromEnv({ SCYLLA_LOADER_DB_TLS_CERT: '/c.pem' })).toThrow(
      'set both --db-tls-cert (SCYLLA_LOADER_DB_TLS_CERT) and --db-tls-key ' +
        '(SCYLLA_LOADER_DB_TLS_KEY), or neither',
    );
  });

  it('name the setting of a failed connection as the caller does', () => {
    const config = dbConfigSchema.parse({ contactPoints: ['db1'], tls: {} });
    const untrusted = Object.assign(new Error('x'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    expect(dbConnectError(untrusted, config).message).toMatch(/: set tls\.caFile to the PEM file/);
    expect(dbConnectError(untrusted, config, dbSettingNames()).message).toMatch(
      /: set --db-tls-ca \(SCYLLA_LOADER_DB_TLS_CA\) to the PEM file/,
    );
    const plain = dbConfigSchema.parse({ contactPoints: ['db1'] });
    const reset = Object.assign(new Error('x'), { code: 'ECONNRESET' });
    expect(dbConnectError(reset, plain).message).toMatch(/turn TLS on with tls and tls\.caFile$/);
    expect(dbConnectError(reset, plain, dbSettingNames()).message).toMatch(
      /turn TLS on with --db-tls \(SCYLLA_LOADER_DB_TLS=true\) and --db-tls-ca \(SCYLLA_LOADER_DB_TLS_CA\)$/,
    );
    const unreachable = new Error('x');
    expect(dbConnectError(unreachable, plain).message).toMatch(/or set contactPoints$/);
  });
});

describe('cassandra.yaml of a node started with --auth --tls', () => {
  const base = {
    format: 1,
    cassandraVersion: '5.0.9',
    clusterName: 'c',
    nodes: 1,
    firstAddress: '127.0.0.31',
    nativePort: 9042,
    storagePort: 7000,
    heapMb: 512,
  };

  it('turns on PasswordAuthenticator and TLS-only client encryption with the keystore', () => {
    const spec = clusterSpecSchema.parse({ ...base, auth: true, tls: true });
    const [node] = nodeLayouts('/state', spec);
    const yaml = renderCassandraYaml(spec, node!, { file: '/state/tls/node.p12', password: 'pw' });
    expect(yaml).toMatch(/^authenticator: PasswordAuthenticator$/m);
    expect(yaml).toMatch(/client_encryption_options:\n {2}enabled: true\n {2}optional: false\n/);
    expect(yaml).toContain('keystore: "/state/tls/node.p12"');
  });

  it('leaves both out for a plain node, and folders made before them parse as plain', () => {
    const spec = clusterSpecSchema.parse(base);
    expect(spec.auth).toBe(false);
    expect(spec.tls).toBe(false);
    const yaml = renderCassandraYaml(spec, nodeLayouts('/state', spec)[0]!);
    expect(yaml).not.toContain('authenticator');
    expect(yaml).not.toContain('client_encryption_options');
  });
});
