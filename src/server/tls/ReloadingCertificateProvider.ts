import { experimental } from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { LoaderError } from '../../core/index.js';
import { describeFileError } from '../describeFileError.js';
import { readTlsFiles } from './readTlsFiles.js';
import type { TlsFilePaths, TlsMaterial } from './TlsFiles.js';

type CaListener = experimental.CaCertificateUpdateListener;
type IdentityListener = experimental.IdentityCertificateUpdateListener;

/**
 * The server's certificate, key and client CA, read again from disk every `reloadIntervalMs`
 * and handed to grpc-js when they change. grpc-js then gives new connections the new
 * certificate (`setSecureContext`); connections already open, and their streams, keep the
 * one they were made with.
 *
 * grpc-js's own `FileWatcherCertificateProvider` does the polling but publishes whatever it
 * reads: a certificate and key caught half-way through a rotation, or a missing file,
 * leave grpc-js without valid credentials and it drops every new connection until the next
 * poll. This provider checks each new set first (the key matches the certificate) and keeps
 * the last good one otherwise, logging why once.
 */
export class ReloadingCertificateProvider implements experimental.CertificateProvider {
  readonly #paths: TlsFilePaths;
  readonly #logger: Logger;
  readonly #caListeners = new Set<CaListener>();
  readonly #identityListeners = new Set<IdentityListener>();
  readonly #timer: NodeJS.Timeout;
  #current: TlsMaterial;
  #reading = false;
  #problem: string | undefined;

  /**
   * @param initial - The files as read and checked at start (`readTlsFilesSync`).
   */
  constructor(paths: TlsFilePaths, initial: TlsMaterial, reloadIntervalMs: number, logger: Logger) {
    this.#paths = paths;
    this.#current = initial;
    this.#logger = logger;
    this.#timer = setInterval(() => void this.#reload(), reloadIntervalMs);
    this.#timer.unref();
  }

  /** Stops reading the files. */
  close(): void {
    clearInterval(this.#timer);
  }

  addCaCertificateListener(listener: CaListener): void {
    this.#caListeners.add(listener);
    process.nextTick(listener, this.#caUpdate());
  }

  removeCaCertificateListener(listener: CaListener): void {
    this.#caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.add(listener);
    process.nextTick(listener, this.#identityUpdate());
  }

  removeIdentityCertificateListener(listener: IdentityListener): void {
    this.#identityListeners.delete(listener);
  }

  #caUpdate(): experimental.CaCertificateUpdate | null {
    const ca = this.#current.clientCa;
    return ca === undefined ? null : { caCertificate: ca };
  }

  #identityUpdate(): experimental.IdentityCertificateUpdate {
    return { certificate: this.#current.cert, privateKey: this.#current.key };
  }

  async #reload(): Promise<void> {
    if (this.#reading) return;
    this.#reading = true;
    try {
      const next = await readTlsFiles(this.#paths);
      this.#problem = undefined;
      const prev = this.#current;
      const identityChanged = !next.cert.equals(prev.cert) || !next.key.equals(prev.key);
      const caChanged = !sameBuffer(next.clientCa, prev.clientCa);
      if (!identityChanged && !caChanged) return;
      this.#current = next;
      this.#logger.info(
        { certFile: this.#paths.certFile, clientCaFile: this.#paths.clientCaFile },
        'TLS files changed: new connections use the new certificate',
      );
      // Identity first: grpc-js applies each update at once, and the CA alone never
      // makes an invalid set.
      if (identityChanged) for (const l of this.#identityListeners) l(this.#identityUpdate());
      if (caChanged) for (const l of this.#caListeners) l(this.#caUpdate());
    } catch (err) {
      const reason = err instanceof LoaderError ? err.message : describeFileError(err);
      if (reason !== this.#problem) {
        this.#problem = reason;
        this.#logger.error(
          { reason },
          'cannot reload the TLS files; connections keep getting the previous certificate',
        );
      }
    } finally {
      this.#reading = false;
    }
  }
}

function sameBuffer(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined || b === undefined ? a === b : a.equals(b);
}
