import cassandra from 'cassandra-driver';
import { type DbSetting, type SettingNames, settingName } from '../config/settingNames.js';
import { type LoaderError, unavailable } from '../errors/LoaderError.js';
import type { DbConfig } from './dbConfig.js';

/** Certificate checks that fail because the loader does not trust the node's CA. */
const UNTRUSTED = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
]);

/**
 * Turns a failed first connection into an UNAVAILABLE error a person can act on: it says what
 * went wrong (credentials refused, certificate not trusted, TLS on one side only, ...) and
 * names the setting to fix, as `names` names it (the CLI: flag and variable; default: the
 * field, `tls.caFile`). Only the driver's error codes and fixed texts are used, never its
 * messages: nothing of the credentials can end up in the message.
 */
export function dbConnectError(err: unknown, config: DbConfig, names?: SettingNames): LoaderError {
  const where = `${config.contactPoints.join(',')}:${config.port}`;
  const reason = diagnose(err, config, (setting) => settingName(names, setting));
  if (reason) return unavailable(`cannot connect to the database at ${where}: ${reason}`, err);
  return unavailable(
    `cannot reach the database at ${where} (datacenter ${config.localDataCenter}); start a ` +
      `local node with \`scylla-loader db start\` or set ${settingName(names, 'contactPoints')}`,
    err,
  );
}

/** How a message names a database setting. */
type NameOf = (setting: DbSetting) => string;

/** The first cause among the hosts' errors that has a known remedy. */
function diagnose(err: unknown, config: DbConfig, name: NameOf): string | undefined {
  const causes =
    err instanceof cassandra.errors.NoHostAvailableError
      ? Object.values(err.innerErrors as Record<string, unknown>)
      : [err];
  for (const cause of causes) {
    const reason = diagnoseOne(cause, config, name);
    if (reason) return reason;
  }
  return undefined;
}

function diagnoseOne(cause: unknown, config: DbConfig, name: NameOf): string | undefined {
  const passwordSettings = `${name('username')} and ${name('password')}`;
  if (cause instanceof cassandra.errors.AuthenticationError) {
    if (config.username === undefined) {
      return `the database requires a password: set ${passwordSettings}`;
    }
    return (
      `the database refused the credentials of user ${JSON.stringify(config.username)}: ` +
      `check ${passwordSettings}`
    );
  }
  const code = (cause as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  const tls = config.tls;
  if (tls) {
    if (UNTRUSTED.has(code)) {
      const trusted = tls.caFile ? `the CA in ${tls.caFile}` : "the system's CAs";
      return (
        `the certificate of the database is not signed by ${trusted} (${code}): set ` +
        `${name('tls.caFile')} to the PEM file of the CA that signed the nodes' certificates`
      );
    }
    if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') {
      return `the certificate of the database is not valid now (${code}): renew it on the nodes`;
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      return (
        'the certificate of the database does not name the address it was reached at: set ' +
        `${name('contactPoints')} to addresses that the certificate names, or turn the check ` +
        `off with ${name('tls.verifyHostname')}`
      );
    }
    if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG') {
      return (
        'the database does not speak TLS on this port: turn TLS off (no TLS setting given) ' +
        `or point ${name('port')} at its TLS port`
      );
    }
    // Seen from a Cassandra 5 node with require_client_auth: no certificate is
    // CERTIFICATE_REQUIRED; one signed by a CA it does not trust is ALERT_INTERNAL_ERROR.
    const refusedCert =
      /CERTIFICATE_REQUIRED|ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_CERTIFICATE_UNKNOWN/.test(
        code,
      ) ||
      (tls.certFile !== undefined && /ALERT_INTERNAL_ERROR|ALERT_DECRYPT_ERROR/.test(code));
    if (refusedCert) {
      const presented =
        tls.certFile === undefined
          ? 'it presented none'
          : `a certificate not signed by a CA the database trusts is the usual cause`;
      return (
        `the database refused the loader's client certificate (${code}; ${presented}): set ` +
        `${name('tls.certFile')} and ${name('tls.keyFile')} to a certificate the database ` +
        'trusts'
      );
    }
    if (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_')) {
      return (
        `the TLS handshake with the database failed (${code}): check the TLS settings ` +
        `(${name('tls.caFile')}, ${name('tls.certFile')}, ${name('tls.keyFile')})`
      );
    }
    return undefined;
  }
  // A TLS-only node drops a plaintext client at its first frame.
  if (code === 'ECONNRESET' || code === 'EPIPE') {
    return (
      'the database closed the connection at once, as a node that requires TLS does: turn ' +
      `TLS on with ${name('tls')} and ${name('tls.caFile')}`
    );
  }
  return undefined;
}
