import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { type SettingNames, settingName } from '../config/settingNames.js';
import { invalidArgument } from '../errors/LoaderError.js';
import type { DbTlsConfig } from './dbConfig.js';

/**
 * The driver's `sslOptions` for {@link DbTlsConfig}: the files read once at connect time, the
 * certificate chain always checked (the driver's own default is not to check it), the host
 * name checked unless `verifyHostname` is false. Throws INVALID_ARGUMENT naming the setting
 * whose file cannot be read, as `names` names it (default: its field, `tls.caFile`).
 */
export function driverTlsOptions(tls: DbTlsConfig, names?: SettingNames): ConnectionOptions {
  return {
    rejectUnauthorized: true,
    ...(tls.caFile ? { ca: readPem(tls.caFile, settingName(names, 'tls.caFile')) } : {}),
    ...(tls.certFile ? { cert: readPem(tls.certFile, settingName(names, 'tls.certFile')) } : {}),
    ...(tls.keyFile ? { key: readPem(tls.keyFile, settingName(names, 'tls.keyFile')) } : {}),
    // Only the name check is skipped: the chain must still lead to a trusted CA.
    ...(tls.verifyHostname ? {} : { checkServerIdentity: () => undefined }),
  };
}

function readPem(file: string, setting: string): Buffer {
  let pem: Buffer;
  try {
    pem = readFileSync(file);
  } catch (err) {
    throw invalidArgument(
      `cannot read ${file}, given as ${setting}: ${(err as NodeJS.ErrnoException).code ?? 'unreadable'}`,
      err,
    );
  }
  // A DER file or a wrong path to some other file would otherwise fail later as an opaque
  // OpenSSL error, or (for a CA) as "certificate not trusted".
  if (!pem.toString('latin1').includes('-----BEGIN ')) {
    throw invalidArgument(`${file}, given as ${setting}, is not a PEM file (no -----BEGIN line)`);
  }
  return pem;
}
