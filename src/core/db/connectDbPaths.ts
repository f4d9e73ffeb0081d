import { invalidArgument } from '../errors/LoaderError.js';
import type { DbPath, DbPathConfig } from './DbPath.js';
import type { SettingNames } from '../config/settingNames.js';
import type { DbConfig } from './dbConfig.js';
import { createDbClient } from './createDbClient.js';

/** Name of the path made from `config.db`, the first of the paths a loader reads over. */
export const PRIMARY_PATH = 'primary';

/**
 * Connects the primary driver client and one per extra path. Extra paths share the primary's
 * datacenter, credentials and pool settings and differ only in where they connect, so they
 * are other routes to the same cluster. If any path cannot connect, those already connected
 * are shut down and the error (UNAVAILABLE, naming the contact points) is thrown; settings are
 * named as `config.settingNames` names them (see `createDbClient`).
 */
export async function connectDbPaths(config: {
  db: DbConfig;
  extraPaths: readonly DbPathConfig[];
  settingNames?: SettingNames | undefined;
  /** Queries the process may have in flight to one route: opens enough connections per host. */
  readsInFlight?: number;
}): Promise<DbPath[]> {
  const options = {
    ...(config.settingNames ? { settingNames: config.settingNames } : {}),
    ...(config.readsInFlight !== undefined ? { readsInFlight: config.readsInFlight } : {}),
  };
  const names = new Set<string>([PRIMARY_PATH]);
  for (const extra of config.extraPaths) {
    if (names.has(extra.name)) {
      throw invalidArgument(
        `extra path name ${JSON.stringify(extra.name)} is used twice or is reserved ` +
          `("${PRIMARY_PATH}" is the main contact points); give each path its own name`,
      );
    }
    names.add(extra.name);
  }
  const paths: DbPath[] = [];
  try {
    paths.push({ name: PRIMARY_PATH, client: await createDbClient(config.db, options) });
    for (const extra of config.extraPaths) {
      const db = { ...config.db, contactPoints: extra.contactPoints, port: extra.port };
      paths.push({ name: extra.name, client: await createDbClient(db, options) });
    }
  } catch (err) {
    await Promise.allSettled(paths.map((p) => p.client.shutdown()));
    throw err;
  }
  return paths;
}
