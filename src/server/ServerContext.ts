import type cassandra from 'cassandra-driver';
import type { Logger } from 'pino';
import type { ServerConfig } from './config/serverConfig.js';
import type { LoaderMetrics } from './metrics/loaderMetrics.js';

/** A route to the database: a driver client of its own. */
export interface DbPath {
  name: string;
  client: cassandra.Client;
}

/** What every RPC handler of a loader process shares. */
export interface ServerContext {
  config: ServerConfig;
  /** The primary route first, then the extra ones. */
  paths: DbPath[];
  metrics: LoaderMetrics;
  logger: Logger;
  /** Key of the resume tokens' HMAC. */
  resumeKey: Buffer;
}
