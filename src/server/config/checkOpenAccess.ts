import { isIP } from 'node:net';
import { invalidArgument } from '../../core/index.js';
import type { ServerConfig } from './serverConfig.js';

/**
 * Refuses a configuration that would serve every RPC to anyone who reaches the port without
 * the user having said so: an address other than loopback, no tokens file, no mutual TLS and
 * no `allowUnauthenticated`. IngestSamples creates keyspaces and CreateSplits scans whole
 * tables, so an open loader is a decision, not a default. The message names both ways out.
 */
export function checkOpenAccess(config: ServerConfig): void {
  if (config.allowUnauthenticated || isLoopback(config.host)) return;
  if (config.authTokensFile !== undefined || config.tls?.clientCaFile !== undefined) return;
  throw invalidArgument(
    `serve would listen on ${config.host} with no authorization: anyone who reaches the port ` +
      'could stream, ingest and create splits. Set --auth-tokens (SCYLLA_LOADER_AUTH_TOKENS_FILE) ' +
      'or mutual TLS (--tls-client-ca), or listen on loopback only (--host 127.0.0.1), or say ' +
      'that it is meant with --allow-unauthenticated (SCYLLA_LOADER_ALLOW_UNAUTHENTICATED=yes)',
  );
}

/** Whether an address to listen on is reachable from this host only. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || /^::ffff:127\./i.test(bare);
  return false;
}
