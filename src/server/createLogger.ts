import pino, { type Logger } from 'pino';
import { invalidArgument } from '../core/index.js';

/**
 * The loader's logger: one JSON object per line on stdout, for log collectors. The level is
 * `SCYLLA_LOADER_LOG_LEVEL` (trace, debug, info, warn, error, fatal, silent), info by default.
 */
export function createLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const level = env.SCYLLA_LOADER_LOG_LEVEL?.trim().toLowerCase() || 'info';
  const known = [...Object.keys(pino.levels.values), 'silent'];
  if (!known.includes(level)) {
    // pino throws a bare Error that names "custom levels"; say what to set instead.
    throw invalidArgument(
      `SCYLLA_LOADER_LOG_LEVEL=${JSON.stringify(level)} is not a log level; use one of ${known.join(', ')}`,
    );
  }
  return pino({
    name: 'scylla-loader',
    level,
    // ISO times read better than epoch milliseconds when a person greps the log.
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
