import { Command, Option } from 'commander';
import { dbConfigFromEnv, type DbConfig } from '../core/index.js';

/** The database flags every command that talks to the database accepts. */
export interface DbFlags {
  contactPoints?: string;
  port?: string;
  localDc?: string;
}

/** Adds `--contact-points`, `--port` and `--local-dc` (with their environment variables). */
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
    );
}

/**
 * Database settings from flags and environment (credentials come only from
 * `SCYLLA_LOADER_DB_USERNAME`/`SCYLLA_LOADER_DB_PASSWORD`, never from flags that `ps` shows).
 * Without contact points, the local development node on 127.0.0.1 is used.
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
  if (config.contactPoints.length === 0) config.contactPoints = ['127.0.0.1'];
  return config;
}
