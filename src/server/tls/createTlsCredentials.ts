import { experimental, type ServerCredentials } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { readTlsFilesSync } from './readTlsFiles.js';
import { ReloadingCertificateProvider } from './ReloadingCertificateProvider.js';
import type { TlsFilePaths } from './TlsFiles.js';

/** Server credentials that follow the TLS files, and the way to stop following them. */
export interface TlsCredentials {
  credentials: ServerCredentials;
  /** Stops the reloads (at shutdown). */
  close(): void;
}

/**
 * TLS server credentials from PEM files, reloaded when the files change (see
 * {@link ReloadingCertificateProvider}). With a client CA, clients must present a certificate
 * that chains to it (mTLS); the handshake of any other client fails. The files are read and
 * checked here, so a missing, unreadable or mismatched file fails the start, naming it.
 */
export function createTlsCredentials(
  paths: TlsFilePaths,
  reloadIntervalMs: number,
  logger: Logger,
): TlsCredentials {
  const provider = new ReloadingCertificateProvider(
    paths,
    readTlsFilesSync(paths),
    reloadIntervalMs,
    logger,
  );
  const mutual = paths.clientCaFile !== undefined;
  // grpc-js 1.14 names the first parameter the CA provider in its typings but uses it as the
  // identity provider, and the second (nullable) one as the CA provider: the order below is
  // the one the code follows. With mTLS one provider plays both roles anyway.
  const credentials = experimental.createCertificateProviderServerCredentials(
    provider,
    mutual ? provider : null,
    mutual,
  );
  return { credentials, close: () => provider.close() };
}
