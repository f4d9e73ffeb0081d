import cassandra from 'cassandra-driver';
import { driverConsistency, QUERY_PROFILES } from './consistency.js';
import type { SettingNames } from '../config/settingNames.js';
import type { DbConfig } from './dbConfig.js';
import { dbConnectError } from './dbConnectError.js';
import { driverTlsOptions } from './driverTlsOptions.js';

/** Requests one connection carries at most (the driver's default for protocol v3 and later). */
export const MAX_REQUESTS_PER_CONNECTION = 2048;

/**
 * Opens a driver client for the configured cluster and connects it (over TLS and with a
 * password when configured), turning a failure into an UNAVAILABLE {@link LoaderError} that
 * names the contact points and, when the cause is known (credentials refused, certificate not
 * trusted, TLS on one side only), the setting to fix. An unreadable TLS file is an
 * INVALID_ARGUMENT naming its setting. Settings are named as `options.settingNames` names them
 * (the CLI: `--db-tls-ca (SCYLLA_LOADER_DB_TLS_CA)`; default: the fields, `tls.caFile`).
 */
export async function createDbClient(
  config: DbConfig,
  options: { keyspace?: string; settingNames?: SettingNames; readsInFlight?: number } = {},
): Promise<cassandra.Client> {
  const { distance } = cassandra.types;
  // The driver refuses a request (BusyConnectionError) once every connection to its host has
  // MAX_REQUESTS_PER_CONNECTION in flight: the process's reads, were they all to go to one
  // host, must fit in its connections.
  const connections = Math.max(
    config.connectionsPerHost,
    Math.ceil((options.readsInFlight ?? 0) / MAX_REQUESTS_PER_CONNECTION),
  );
  const client = new cassandra.Client({
    contactPoints: config.contactPoints,
    localDataCenter: config.localDataCenter,
    protocolOptions: { port: config.port },
    ...(options.keyspace ? { keyspace: options.keyspace } : {}),
    ...(config.tls ? { sslOptions: driverTlsOptions(config.tls, options.settingNames) } : {}),
    ...(config.username
      ? {
          authProvider: new cassandra.auth.PlainTextAuthProvider(
            config.username,
            config.password ?? '',
          ),
        }
      : {}),
    pooling: {
      coreConnectionsPerHost: {
        [distance.local]: connections,
        [distance.remote]: 1,
      },
      maxRequestsPerConnection: MAX_REQUESTS_PER_CONNECTION,
    },
    // The driver times a new connection's handshake (STARTUP, auth) with the socket's
    // readTimeout, not connectTimeout: a handshake lost in a network fault held its node down
    // for the whole request timeout (12 s) after the fault had ended. So the socket's timeout is
    // the connection one, and queries get the request timeout from the default profile.
    socketOptions: {
      readTimeout: config.connectTimeoutMs,
      connectTimeout: config.connectTimeoutMs,
    },
    // One profile per kind of query, each with its consistency setting (see QUERY_PROFILES);
    // a profile takes no timeout from the default one, so each names it.
    profiles: [
      new cassandra.ExecutionProfile('default', {
        readTimeout: config.requestTimeoutMs,
        consistency: driverConsistency(config.readConsistency),
      }),
      new cassandra.ExecutionProfile(QUERY_PROFILES.write, {
        readTimeout: config.requestTimeoutMs,
        consistency: driverConsistency(config.writeConsistency),
      }),
      new cassandra.ExecutionProfile(QUERY_PROFILES.sampleRead, {
        readTimeout: config.requestTimeoutMs,
        consistency: driverConsistency(config.sampleReadConsistency),
      }),
    ],
    // A node whose connections all broke is marked down and, with the driver's default
    // (1 s doubling up to 10 minutes, first try after a delay), came back 4-7 s after a 2 s
    // fault of its route: its streams stalled that long. A loader would rather try again at
    // once and every 2 s at most; a failed attempt costs one connection attempt.
    policies: {
      reconnection: new cassandra.policies.reconnection.ExponentialReconnectionPolicy(
        100,
        2_000,
        true,
      ),
    },
    // Blobs (and uuids) as views of the received frame instead of copies: saves one copy of
    // every sample's bytes, which the batch encoder copies into the message anyway. A sample
    // read is a single-row response, so its blob keeps alive only the frame it came in (or,
    // for a frame shorter than one socket read, that read's chunk of at most 64 KiB) and only
    // until its batch is encoded. Whoever keeps such values longer should copy them.
    encoding: { copyBuffer: false },
  });
  try {
    await client.connect();
  } catch (err) {
    await client.shutdown().catch(() => undefined);
    throw dbConnectError(err, config, options.settingNames);
  }
  return client;
}
