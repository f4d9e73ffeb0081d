import { readFileSync } from 'node:fs';
import { credentials, type ChannelCredentials } from '@grpc/grpc-js';
import type { ClientTlsOptions } from './ClientTlsOptions.js';

/**
 * Channel credentials for {@link ClientTlsOptions}. A missing file or a certificate without
 * its key throws a TypeError naming the option, when the client is made.
 *
 * @internal
 */
export function tlsCredentials(tls: ClientTlsOptions | true): ChannelCredentials {
  const options = tls === true ? {} : tls;
  if ((options.cert === undefined) !== (options.key === undefined)) {
    throw new TypeError('tls.cert and tls.key go together: set both for mTLS, or neither');
  }
  // serverName is a channel option (`grpc.ssl_target_name_override`, see channelOptions).
  return credentials.createSsl(
    pem(options.ca, 'tls.ca'),
    pem(options.key, 'tls.key'),
    pem(options.cert, 'tls.cert'),
  );
}

/** PEM bytes of an option: given, or read from the path it names. */
function pem(value: Buffer | string | undefined, option: string): Buffer | null {
  if (value === undefined) return null;
  if (Buffer.isBuffer(value)) return value;
  if (value.includes('-----BEGIN')) return Buffer.from(value);
  try {
    return readFileSync(value);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new TypeError(`${option}: cannot read PEM file ${value} (${code})`, { cause: err });
  }
}
