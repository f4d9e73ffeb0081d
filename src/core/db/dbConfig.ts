import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { invalidArgument } from '../errors/LoaderError.js';

/** TLS to the database: which CA to trust, an optional client certificate, host name checks. */
export const dbTlsConfigSchema = z
  .object({
    /** PEM file of the CA(s) that signed the nodes' certificates; absent: the system's CAs. */
    caFile: z.string().min(1).optional(),
    /** PEM client certificate, for clusters that require one (with `keyFile`). */
    certFile: z.string().min(1).optional(),
    /** PEM private key of `certFile`. */
    keyFile: z.string().min(1).optional(),
    /** Whether a node's certificate must name the address it is reached at (default true). */
    verifyHostname: z.boolean().default(true),
  })
  .refine((t) => (t.certFile === undefined) === (t.keyFile === undefined), {
    message:
      'a client certificate needs its key and the reverse: set both --db-tls-cert ' +
      '(SCYLLA_LOADER_DB_TLS_CERT) and --db-tls-key (SCYLLA_LOADER_DB_TLS_KEY), or neither',
  });

/** Validated TLS settings of the database connection. */
export type DbTlsConfig = z.infer<typeof dbTlsConfigSchema>;

/**
 * How to reach the database cluster. When `contactPoints` is empty the CLI uses the local
 * development node started by `scylla-loader db start` instead.
 */
export const dbConfigSchema = z.object({
  contactPoints: z.array(z.string().min(1)).default([]),
  port: z.number().int().min(1).max(65535).default(9042),
  localDataCenter: z.string().min(1).default('datacenter1'),
  username: z.string().optional(),
  /** A secret: never logged (see the configuration `serve` prints) nor put in messages. */
  password: z.string().optional(),
  /** TLS to the nodes; absent: plaintext. */
  tls: dbTlsConfigSchema.optional(),
  /** Connections the driver opens to each host (many, for high-latency links). */
  connectionsPerHost: z.number().int().min(1).max(64).default(4),
  /** Per-request timeout in milliseconds. */
  requestTimeoutMs: z.number().int().min(100).default(12_000),
});

/** Validated database settings. */
export type DbConfig = z.infer<typeof dbConfigSchema>;

/**
 * Reads database settings from the environment, merged under explicit overrides:
 * `SCYLLA_LOADER_CONTACT_POINTS` (comma separated hosts), `SCYLLA_LOADER_CQL_PORT`,
 * `SCYLLA_LOADER_LOCAL_DC`, `SCYLLA_LOADER_DB_USERNAME`, and the password either as
 * `SCYLLA_LOADER_DB_PASSWORD` or as the content of the file `SCYLLA_LOADER_DB_PASSWORD_FILE`
 * names (a mounted Secret; one trailing newline is dropped). TLS is on when
 * `SCYLLA_LOADER_DB_TLS` is true or any of `SCYLLA_LOADER_DB_TLS_CA`, `SCYLLA_LOADER_DB_TLS_CERT`,
 * `SCYLLA_LOADER_DB_TLS_KEY` is set; `SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME=false` turns the host
 * name check off. An override `tls` replaces the environment's TLS settings as a whole.
 *
 * Throws INVALID_ARGUMENT naming the variable for an unreadable password file, both password
 * variables set, or a yes/no variable that is neither.
 */
export function dbConfigFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<DbConfig> = {},
): DbConfig {
  const fromEnv: Record<string, unknown> = {};
  if (env.SCYLLA_LOADER_CONTACT_POINTS) {
    fromEnv.contactPoints = env.SCYLLA_LOADER_CONTACT_POINTS.split(',')
      .map((s) => s.trim())
      .filter((s) => s.length > 0);
  }
  if (env.SCYLLA_LOADER_CQL_PORT) fromEnv.port = Number(env.SCYLLA_LOADER_CQL_PORT);
  if (env.SCYLLA_LOADER_LOCAL_DC) fromEnv.localDataCenter = env.SCYLLA_LOADER_LOCAL_DC;
  if (env.SCYLLA_LOADER_DB_USERNAME) fromEnv.username = env.SCYLLA_LOADER_DB_USERNAME;
  const password = passwordFromEnv(env);
  if (password !== undefined) fromEnv.password = password;
  const tls = dbTlsFromEnv(env);
  if (tls) fromEnv.tls = tls;
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return dbConfigSchema.parse({ ...fromEnv, ...defined });
}

/** TLS settings from `SCYLLA_LOADER_DB_TLS*`, or undefined when none asks for TLS. */
function dbTlsFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> | undefined {
  const on = yesNo(env, 'SCYLLA_LOADER_DB_TLS');
  const files = {
    ...(env.SCYLLA_LOADER_DB_TLS_CA ? { caFile: env.SCYLLA_LOADER_DB_TLS_CA } : {}),
    ...(env.SCYLLA_LOADER_DB_TLS_CERT ? { certFile: env.SCYLLA_LOADER_DB_TLS_CERT } : {}),
    ...(env.SCYLLA_LOADER_DB_TLS_KEY ? { keyFile: env.SCYLLA_LOADER_DB_TLS_KEY } : {}),
  };
  if (on === false || (on === undefined && Object.keys(files).length === 0)) return undefined;
  const verify = yesNo(env, 'SCYLLA_LOADER_DB_TLS_VERIFY_HOSTNAME');
  return { ...files, ...(verify === undefined ? {} : { verifyHostname: verify }) };
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

function yesNo(env: NodeJS.ProcessEnv, name: string): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw invalidArgument(`${name} must be true or false, not ${JSON.stringify(env[name])}`);
}
