import { z } from 'zod';

/**
 * How to reach the database cluster. When `contactPoints` is empty the CLI uses the local
 * development node started by `scylla-loader db start` instead.
 */
export const dbConfigSchema = z.object({
  contactPoints: z.array(z.string().min(1)).default([]),
  port: z.number().int().min(1).max(65535).default(9042),
  localDataCenter: z.string().min(1).default('datacenter1'),
  username: z.string().optional(),
  password: z.string().optional(),
  /** Connections the driver opens to each host (many, for high-latency links). */
  connectionsPerHost: z.number().int().min(1).max(64).default(4),
  /** Per-request timeout in milliseconds. */
  requestTimeoutMs: z.number().int().min(100).default(12_000),
});

/** Validated database settings. */
export type DbConfig = z.infer<typeof dbConfigSchema>;

/**
 * Reads database settings from the environment (`SCYLLA_LOADER_CONTACT_POINTS` as a comma
 * separated list of hosts, `SCYLLA_LOADER_CQL_PORT`, `SCYLLA_LOADER_LOCAL_DC`,
 * `SCYLLA_LOADER_DB_USERNAME`, `SCYLLA_LOADER_DB_PASSWORD`), merged under explicit overrides.
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
  if (env.SCYLLA_LOADER_DB_PASSWORD) fromEnv.password = env.SCYLLA_LOADER_DB_PASSWORD;
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  return dbConfigSchema.parse({ ...fromEnv, ...defined });
}
