import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { invalidArgument } from '../../core/index.js';
import { describeFileError } from '../describeFileError.js';
import type { TlsFilePaths, TlsMaterial } from './TlsFiles.js';

/** Where each file is set, for messages that say what to fix. */
const SETTING = {
  certFile: '--tls-cert, SCYLLA_LOADER_TLS_CERT',
  keyFile: '--tls-key, SCYLLA_LOADER_TLS_KEY',
  clientCaFile: '--tls-client-ca, SCYLLA_LOADER_TLS_CLIENT_CA',
} as const;

type Which = keyof typeof SETTING;

/**
 * Reads the TLS files at start and checks them, so a bad file stops the start with a message
 * naming it instead of every handshake failing later: each file exists and is readable, the
 * certificate and the CA bundle parse as PEM certificates, the key as a PEM private key, and
 * the key belongs to the certificate. Messages name files and settings, never content.
 */
export function readTlsFilesSync(paths: TlsFilePaths): TlsMaterial {
  const read = (which: Which, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw unreadable(which, file, err);
    }
  };
  return checkTlsMaterial(paths, {
    cert: read('certFile', paths.certFile),
    key: read('keyFile', paths.keyFile),
    clientCa:
      paths.clientCaFile === undefined ? undefined : read('clientCaFile', paths.clientCaFile),
  });
}

/** {@link readTlsFilesSync} without blocking, for reloads. */
export async function readTlsFiles(paths: TlsFilePaths): Promise<TlsMaterial> {
  const read = async (which: Which, file: string): Promise<Buffer> => {
    try {
      return await readFile(file);
    } catch (err) {
      throw unreadable(which, file, err);
    }
  };
  const [cert, key, clientCa] = await Promise.all([
    read('certFile', paths.certFile),
    read('keyFile', paths.keyFile),
    paths.clientCaFile === undefined ? undefined : read('clientCaFile', paths.clientCaFile),
  ]);
  return checkTlsMaterial(paths, { cert, key, clientCa });
}

/** Checks what the files hold (see {@link readTlsFilesSync}); returns it unchanged. */
export function checkTlsMaterial(paths: TlsFilePaths, material: TlsMaterial): TlsMaterial {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(material.cert);
  } catch (err) {
    throw invalidArgument(
      `TLS certificate file ${paths.certFile} (${SETTING.certFile}) does not hold a PEM ` +
        'certificate ("-----BEGIN CERTIFICATE-----")',
      err,
    );
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(material.key);
  } catch (err) {
    throw invalidArgument(
      `TLS key file ${paths.keyFile} (${SETTING.keyFile}) does not hold an unencrypted PEM ` +
        'private key ("-----BEGIN PRIVATE KEY-----" or "-----BEGIN RSA/EC PRIVATE KEY-----")',
      err,
    );
  }
  if (!cert.checkPrivateKey(key)) {
    throw invalidArgument(
      `TLS key file ${paths.keyFile} (${SETTING.keyFile}) does not match the certificate in ` +
        `${paths.certFile} (${SETTING.certFile}); give the key the certificate was issued for`,
    );
  }
  if (material.clientCa !== undefined) {
    try {
      new X509Certificate(material.clientCa);
    } catch (err) {
      throw invalidArgument(
        `TLS client CA file ${paths.clientCaFile ?? ''} (${SETTING.clientCaFile}) does not ` +
          'hold a PEM certificate ("-----BEGIN CERTIFICATE-----")',
        err,
      );
    }
  }
  return material;
}

function unreadable(which: Which, file: string, err: unknown): Error {
  const what = { certFile: 'certificate', keyFile: 'key', clientCaFile: 'client CA' }[which];
  return invalidArgument(
    `cannot read the TLS ${what} file ${file} (${SETTING[which]}): ${describeFileError(err)}`,
    err,
  );
}
