import pino from 'pino';
import { type ServerConfig, serverConfigSchema } from '../../src/server/index.js';
import {
  createLoaderServer,
  type LoaderServer,
  type LoaderServerOptions,
} from '../../src/server/index.js';
import { testDbConfig } from './dbHelpers.js';

/** The logger of a test's in-process loader: nothing, unless a test passes its own. */
export const silentLogger = pino({ level: 'silent' });

/**
 * The settings of a test's loader: gRPC and /metrics on free ports of 127.0.0.1, against the
 * database the integration tests' global setup provided, with `overrides` on top (a test that
 * runs against a ring of its own passes `db`). Everything else is `serve`'s default.
 */
export function testServerConfig(overrides: Record<string, unknown> = {}): ServerConfig {
  return serverConfigSchema.parse({
    db: testDbConfig(),
    host: '127.0.0.1',
    port: 0,
    metricsPort: 0,
    ...overrides,
  });
}

/**
 * An in-process loader with {@link testServerConfig}`(overrides)`, logging nothing unless
 * `options.logger` is given; the caller shuts it down.
 */
export async function startTestServer(
  overrides: Record<string, unknown> = {},
  options: LoaderServerOptions = {},
): Promise<LoaderServer> {
  return createLoaderServer(testServerConfig(overrides), { logger: silentLogger, ...options });
}
