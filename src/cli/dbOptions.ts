import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import {
  type ConsistencySetting,
  type DbConfig,
  type DbSetting,
  dbConfigSchemaNaming,
  invalidArgument,
} from '../core/index.js';
import { type Setting, flagName, settingName } from './settings/Setting.js';
import { schemaFacts } from './settings/schemaFacts.js';
import {
  type FlagValues,
  addSettingOptions,
  flagValuesFromEnv,
  parseSettings,
  rawFromFlags,
  yesNo,
} from './settings/settingOptions.js';

/**
 * The database settings every command that talks to the database accepts. Credentials have
 * variables only, never flags that `ps` shows. `serve` adds {@link DB_POOL_SETTINGS}.
 */
export const DB_SETTINGS: readonly Setting[] = [
  {
    field: 'db.contactPoints',
    flag: '--contact-points <hosts>',
    env: 'SCYLLA_LOADER_CONTACT_POINTS',
    type: 'list',
    help: 'comma-separated database hosts',
    defaultText: 'the local node, 127.0.0.1',
  },
  {
    field: 'db.port',
    flag: '--port <port>',
    env: 'SCYLLA_LOADER_CQL_PORT',
    type: 'number',
    unit: 'port',
    help: 'CQL port',
  },
  {
    field: 'db.localDataCenter',
    flag: '--local-dc <name>',
    env: 'SCYLLA_LOADER_LOCAL_DC',
    type: 'text',
    help: 'local datacenter of the driver',
  },
  {
    field: 'db.writeConsistency',
    flag: '--write-consistency <level>',
    env: 'SCYLLA_LOADER_WRITE_CONSISTENCY',
    type: 'choice',
    help:
      'consistency of ingest, split and training ledger writes (LOCAL_QUORUM: an acknowledged sample survives ' +
      'the loss of a replica)',
  },
  {
    field: 'db.readConsistency',
    flag: '--read-consistency <level>',
    env: 'SCYLLA_LOADER_READ_CONSISTENCY',
    type: 'choice',
    help:
      'consistency of metadata, dataset info and split reads (LOCAL_QUORUM sees every ' +
      'LOCAL_QUORUM write)',
  },
  {
    field: 'db.sampleReadConsistency',
    flag: '--sample-read-consistency <level>',
    env: 'SCYLLA_LOADER_SAMPLE_READ_CONSISTENCY',
    type: 'choice',
    help: 'consistency of sample reads, the hot path (a slow replica is hedged)',
  },
  {
    field: 'db.username',
    env: 'SCYLLA_LOADER_DB_USERNAME',
    type: 'text',
    help: 'database user for password authentication',
    defaultText: 'none',
  },
  {
    field: 'db.password',
    env: 'SCYLLA_LOADER_DB_PASSWORD',
    type: 'text',
    help: 'its password (or SCYLLA_LOADER_DB_PASSWORD_FILE, not both)',
    defaultText: 'none',
    secret: true,
  },
  {
    env: 'SCYLLA_LOADER_DB_PASSWORD_FILE',
    type: 'text',
    help: 'file holding the password, e.g. a mounted Secret (one trailing newline is dropped)',
    defaultText: 'none',
  },
  {
    field: 'db.tls',
    flag: '--db-tls',
    env: 'SCYLLA_LOADER_DB_TLS',
    type: 'switch',
    help:
      'TLS to the database, trusting the system CAs unless --db-tls-ca is given ' +
      '(implied by any other --db-tls setting)',
    defaultText: 'off',
  },
  {
    field: 'db.tls.caFile',
    flag: '--db-tls-ca <file>',
    env: 'SCYLLA_LOADER_DB_TLS_CA',
    type: 'text',
    help: 'PEM file of the CA that signed the database nodes',
    defaultText: 'the system CAs',
  },
  {
    field: 'db.tls.certFile',
    flag: '--db-tls-cert <file>',
    env: 'SCYLLA_LOADER_DB_TLS_CERT',
    type: 'text',
    help: 'PEM client certificate, for a database that requires one (with --db-tls-key)',
    defaultText: 'none',
  },
  {
    field: 'db.tls.keyFile',
    flag: '--db-tls-key <file>',
    env: 'SCYLLA_LOADER_DB_TLS_KEY',
    type: 'text',
    help: 'PEM private key of --db-tls-cert',
    defaultText: 'none',
  },
  {
    field: 'db.tls.verifyHostname',
    flag: '--db-tls-no-verify-hostname',
    env: 'SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME',
    type: 'switch',
    help:
      "accept a node certificate that does not name the node's address (the CA is still " +
      'checked); its variable is the opposite: SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME=false',
    defaultText: 'host names checked',
  },
];

/** The driver's pool: settings of `serve`, where they matter. */
export const DB_POOL_SETTINGS: readonly Setting[] = [
  {
    field: 'db.connectionsPerHost',
    flag: '--connections-per-host <n>',
    env: 'SCYLLA_LOADER_CONNECTIONS_PER_HOST',
    type: 'number',
    unit: 'connections',
    help: 'driver connections per database host',
  },
  {
    field: 'db.requestTimeoutMs',
    flag: '--request-timeout-ms <n>',
    env: 'SCYLLA_LOADER_REQUEST_TIMEOUT_MS',
    type: 'number',
    unit: 'ms',
    help: 'per-request database timeout',
  },
  {
    field: 'db.connectTimeoutMs',
    flag: '--connect-timeout-ms <n>',
    env: 'SCYLLA_LOADER_CONNECT_TIMEOUT_MS',
    type: 'number',
    unit: 'ms',
    help:
      'longest a database connection may take to open (TCP, TLS, handshake); a node with ' +
      'no connection left is down until one opens',
  },
];

/**
 * How the core's messages name the database settings: as {@link DB_SETTINGS} declares them,
 * flag then variable (`--db-tls-ca (SCYLLA_LOADER_DB_TLS_CA)`). A switch is named as set the
 * way its flag sets it (`--db-tls (SCYLLA_LOADER_DB_TLS=true)`, `--db-tls-no-verify-hostname
 * (SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME=false)`); the password with its file's variable.
 */
export function dbSettingNames(): Record<DbSetting, string> {
  const declared = (field: string): Setting => {
    const setting = DB_SETTINGS.find((s) => s.field === `db.${field}`);
    if (setting === undefined) throw new Error(`no database setting declares db.${field}`);
    return setting;
  };
  const named = (field: DbSetting): string => {
    const setting = declared(field);
    if (setting.type !== 'switch' || setting.flag === undefined || setting.env === undefined) {
      return settingName(setting);
    }
    // A `--...-no-...` flag turns its field off, as Commander's negated flags do.
    const value = flagName(setting.flag).includes('-no-') ? 'false' : 'true';
    return `${flagName(setting.flag)} (${setting.env}=${value})`;
  };
  const passwordFile = DB_SETTINGS.find((s) => s.field === undefined && s.env?.endsWith('_FILE'));
  const password =
    passwordFile === undefined
      ? named('password')
      : `${named('password')} (or ${settingName(passwordFile)})`;
  return {
    contactPoints: named('contactPoints'),
    port: named('port'),
    username: named('username'),
    password,
    tls: named('tls'),
    'tls.caFile': named('tls.caFile'),
    'tls.certFile': named('tls.certFile'),
    'tls.keyFile': named('tls.keyFile'),
    'tls.verifyHostname': named('tls.verifyHostname'),
  };
}

const dbOnlySchema = z.object({ db: dbConfigSchemaNaming(dbSettingNames()) });
const DB_FACTS = schemaFacts(dbOnlySchema);

/** The database flags as Commander hands them over. */
export interface DbFlags {
  contactPoints?: string;
  port?: string;
  localDc?: string;
  dbTls?: boolean;
  dbTlsCa?: string;
  dbTlsCert?: string;
  dbTlsKey?: string;
  dbTlsNoVerifyHostname?: boolean;
  writeConsistency?: string;
  readConsistency?: string;
  sampleReadConsistency?: string;
}

/**
 * The consistency settings as this command line names them (`--write-consistency
 * (SCYLLA_LOADER_WRITE_CONSISTENCY)`), for messages about too few replicas.
 */
export function consistencySettingNames(): Record<ConsistencySetting, string> {
  const named = (field: ConsistencySetting): string =>
    settingName(DB_SETTINGS.find((s) => s.field === `db.${field}`)!);
  return {
    writeConsistency: named('writeConsistency'),
    readConsistency: named('readConsistency'),
    sampleReadConsistency: named('sampleReadConsistency'),
  };
}

/** Adds the database flags, with their variables, to a command. */
export function addDbOptions(cmd: Command): Command {
  return addSettingOptions(cmd, DB_SETTINGS, DB_FACTS);
}

/**
 * Database settings from flags (Commander has filled them from their variables) and the
 * variables that have no flag. Without contact points, the local development node on
 * 127.0.0.1 is used.
 */
export function dbConfigFromFlags(flags: DbFlags, env: NodeJS.ProcessEnv = process.env): DbConfig {
  const config = parseDbConfig(dbRawFromFlags(flags, env));
  if (config.contactPoints.length === 0) config.contactPoints = ['127.0.0.1'];
  return config;
}

/**
 * Database settings from variables alone, for code without a command line (the test set-up,
 * `db start`); `overrides` win. Empty contact points mean "the local node": the caller decides.
 *
 * Throws INVALID_ARGUMENT naming the variable for an unreadable password file, both password
 * variables set, or a yes/no variable that is neither.
 */
export function dbConfigFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<DbConfig> = {},
): DbConfig {
  const config = parseDbConfig(dbRawFromFlags(flagValuesFromEnv(DB_SETTINGS, env), env));
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return dbOnlySchema.shape.db.parse({ ...config, ...defined });
}

/** A raw database configuration checked by the schema, refusals named by flag and variable. */
function parseDbConfig(raw: Record<string, unknown>): DbConfig {
  return parseSettings('database configuration', DB_SETTINGS, () => dbOnlySchema.parse({ db: raw }))
    .db;
}

/**
 * The one place database settings are assembled, unchecked (`serve` checks them with the rest
 * of its configuration). `extra`: a command's further database settings (the pool). TLS is on
 * when `--db-tls` or `SCYLLA_LOADER_DB_TLS=true` asks for it or any other TLS setting is
 * given, and off when `SCYLLA_LOADER_DB_TLS=false` and nothing else asks.
 */
export function dbRawFromFlags(
  flags: DbFlags | FlagValues,
  env: NodeJS.ProcessEnv,
  extra: readonly Setting[] = [],
): Record<string, unknown> {
  const raw = rawFromFlags([...DB_SETTINGS, ...extra], flags as FlagValues);
  const db = (raw.db ?? {}) as Record<string, unknown>;
  const { tls: tlsFiles, ...rest } = db as { tls?: Record<string, unknown> } & Record<
    string,
    unknown
  >;
  if (env.SCYLLA_LOADER_DB_USERNAME) rest.username = env.SCYLLA_LOADER_DB_USERNAME;
  const password = passwordFromEnv(env);
  if (password !== undefined) rest.password = password;
  const switchedOn = flags.dbTls === true ? true : yesNo(env, 'SCYLLA_LOADER_DB_TLS');
  const verify =
    flags.dbTlsNoVerifyHostname === true
      ? false
      : yesNo(env, 'SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME');
  const asked = Object.keys(tlsFiles ?? {}).length > 0 || flags.dbTlsNoVerifyHostname === true;
  if (switchedOn === true || asked) {
    rest.tls = { ...tlsFiles, ...(verify === undefined ? {} : { verifyHostname: verify }) };
  }
  return rest;
}

function passwordFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  const file = env.SCYLLA_LOADER_DB_PASSWORD_FILE;
  if (!file) return env.SCYLLA_LOADER_DB_PASSWORD || undefined;
  if (env.SCYLLA_LOADER_DB_PASSWORD) {
    throw invalidArgument(
      'both SCYLLA_LOADER_DB_PASSWORD and SCYLLA_LOADER_DB_PASSWORD_FILE are set; set only one',
    );
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw invalidArgument(
      `cannot read the database password file ${file} (SCYLLA_LOADER_DB_PASSWORD_FILE): ` +
        `${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      err,
    );
  }
  // Files written by `echo` or editors end with a newline that is not part of the password.
  const password = text.replace(/\r?\n$/, '');
  if (password === '') {
    throw invalidArgument(
      `the database password file ${file} (SCYLLA_LOADER_DB_PASSWORD_FILE) is empty`,
    );
  }
  return password;
}
