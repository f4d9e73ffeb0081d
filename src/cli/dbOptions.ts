import { Command, Option } from 'commander';
import { dbConfigFromEnv, dbTlsConfigSchema, type DbConfig } from '../core/index.js';

/** The database flags every command that talks to the database accepts. */
export interface DbFlags {
  contactPoints?: string;
  port?: string;
  localDc?: string;
  dbTls?: boolean;
  dbTlsCa?: string;
  dbTlsCert?: string;
  dbTlsKey?: string;
  dbTlsNoVerifyHostname?: boolean;
}

/**
 * Adds `--contact-points`, `--port`, `--local-dc` and the `--db-tls*` flags (with their
 * environment variables). The yes/no flags have no `.env()`: Commander would read
 * `SCYLLA_LOADER_DB_TLS=false` as on, so the core reads those variables itself.
 */
export function addDbOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--contact-points <hosts>',
        'comma-separated database hosts (default: the local node, 127.0.0.1)',
      ).env('SCYLLA_LOADER_CONTACT_POINTS'),
    )
    .addOption(new Option('--port <port>', 'CQL port').env('SCYLLA_LOADER_CQL_PORT'))
    .addOption(
      new Option('--local-dc <name>', 'local datacenter of the driver').env(
        'SCYLLA_LOADER_LOCAL_DC',
      ),
    )
    .addOption(
      new Option(
        '--db-tls',
        'TLS to the database, trusting the system CAs unless --db-tls-ca is given ' +
          '(env SCYLLA_LOADER_DB_TLS=true; implied by any other --db-tls flag)',
      ),
    )
    .addOption(
      new Option('--db-tls-ca <file>', 'PEM file of the CA that signed the database nodes').env(
        'SCYLLA_LOADER_DB_TLS_CA',
      ),
    )
    .addOption(
      new Option(
        '--db-tls-cert <file>',
        'PEM client certificate, for a database that requires one (with --db-tls-key)',
      ).env('SCYLLA_LOADER_DB_TLS_CERT'),
    )
    .addOption(
      new Option('--db-tls-key <file>', 'PEM private key of --db-tls-cert').env(
        'SCYLLA_LOADER_DB_TLS_KEY',
      ),
    )
    .addOption(
      new Option(
        '--db-tls-no-verify-hostname',
        "accept a node certificate that does not name the node's address (the CA is still " +
          'checked; env SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME=false)',
      ),
    );
}

/**
 * Database settings from flags and environment. Credentials come only from the environment
 * (`SCYLLA_LOADER_DB_USERNAME`, and `SCYLLA_LOADER_DB_PASSWORD` or
 * `SCYLLA_LOADER_DB_PASSWORD_FILE`), never from flags that `ps` shows. TLS flags override the
 * matching environment settings one by one. Without contact points, the local development
 * node on 127.0.0.1 is used.
 */
export function dbConfigFromFlags(flags: DbFlags): DbConfig {
  const config = dbConfigFromEnv(process.env, {
    ...(flags.contactPoints
      ? {
          contactPoints: flags.contactPoints
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        }
      : {}),
    ...(flags.port !== undefined ? { port: Number(flags.port) } : {}),
    ...(flags.localDc !== undefined ? { localDataCenter: flags.localDc } : {}),
  });
  const anyTlsFlag =
    flags.dbTls === true ||
    flags.dbTlsNoVerifyHostname === true ||
    [flags.dbTlsCa, flags.dbTlsCert, flags.dbTlsKey].some((f) => f !== undefined && f !== '');
  if (anyTlsFlag || config.tls) {
    const base = config.tls;
    config.tls = dbTlsConfigSchema.parse({
      ...base,
      ...(flags.dbTlsCa ? { caFile: flags.dbTlsCa } : {}),
      ...(flags.dbTlsCert ? { certFile: flags.dbTlsCert } : {}),
      ...(flags.dbTlsKey ? { keyFile: flags.dbTlsKey } : {}),
      ...(flags.dbTlsNoVerifyHostname ? { verifyHostname: false } : {}),
    });
  }
  if (config.contactPoints.length === 0) config.contactPoints = ['127.0.0.1'];
  return config;
}
