import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { LoaderError } from '../core/index.js';

const run = promisify(execFile);

/**
 * The TLS files of a local cluster started with `--tls`, all under `<stateDir>/tls/`.
 *
 * @internal
 */
export interface DevTlsFiles {
  /** PEM of the test CA that signed the nodes' certificate: what clients trust. */
  caFile: string;
  /** PKCS12 keystore with the nodes' key and certificate chain, for `cassandra.yaml`. */
  keystoreFile: string;
  /** Password of every keystore (random, made once per state folder). */
  keystorePassword: string;
  /** With client auth: PKCS12 truststore holding the test CA, for `cassandra.yaml`. */
  truststoreFile?: string;
  /** With client auth: a client certificate signed by the test CA and its key (PEM). */
  clientCertFile?: string;
  clientKeyFile?: string;
}

/**
 * Where a folder keeps the client certificate and key (PEM) of a cluster started with
 * `--tls-client-auth`. @internal
 */
export function devClientCertFiles(stateDir: string): { certFile: string; keyFile: string } {
  const dir = path.join(stateDir, 'tls');
  return { certFile: path.join(dir, 'client.pem'), keyFile: path.join(dir, 'client.key') };
}

/**
 * Makes (once per state folder) a test CA and a node certificate signed by it, with `keytool`
 * of the JDK that runs the nodes, so nothing beyond that JDK is needed (no openssl). The CA is
 * kept across starts, so a client's CA file stays valid; the node keystore is made again when
 * the cluster's addresses differ from those it was made for.
 *
 * The node certificate names every node address (and `localhost`) as subject alternative
 * names, so clients can verify the host name of whichever node they connect to.
 *
 * @internal
 */
export async function ensureDevTls(
  stateDir: string,
  addresses: readonly string[],
  java: string,
  options: { clientAuth?: boolean; log?: (line: string) => void } = {},
): Promise<DevTlsFiles> {
  const log = options.log;
  const dir = path.join(stateDir, 'tls');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(dir, 'keystore.password');
  const caStore = path.join(dir, 'ca.p12');
  const caFile = path.join(dir, 'ca.pem');
  const keystoreFile = path.join(dir, 'node.p12');
  const sansFile = path.join(dir, 'node.sans');
  const sans = ['dns:localhost', ...addresses.map((a) => `ip:${a}`)].join(',');

  if (!existsSync(passwordFile) || !existsSync(caStore) || !existsSync(caFile)) {
    // A CA without its password (or the reverse) is useless: start the folder over, with
    // everything made from that CA or sealed with that password.
    const client = devClientCertFiles(stateDir);
    await Promise.all(
      [
        caStore,
        caFile,
        keystoreFile,
        sansFile,
        passwordFile,
        path.join(dir, 'truststore.p12'),
        client.certFile,
        client.keyFile,
      ].map((f) => rm(f, { force: true })),
    );
    await writeFile(passwordFile, `${randomBytes(18).toString('base64url')}\n`, { mode: 0o600 });
  }
  const keystorePassword = (await readFile(passwordFile, 'utf8')).trim();
  const keytool = keytoolBeside(java);
  const tool = async (args: string[]): Promise<void> => {
    try {
      await run(keytool, [
        ...args,
        '-storetype',
        'PKCS12',
        '-storepass',
        keystorePassword,
        '-noprompt',
      ]);
    } catch (err) {
      const e = err as { stderr?: string; stdout?: string; message: string };
      // keytool's own output names the problem; the command line would show the password.
      const detail = (e.stderr || e.stdout || e.message).trim().split('\n').slice(0, 5).join('\n');
      throw new LoaderError(
        'FAILED_PRECONDITION',
        `keytool ${args[0]} failed while making the local cluster's test certificates in ${dir} ` +
          `(${keytool}; it comes with the JDK 17 that runs the nodes): ${detail}`,
        { cause: err },
      );
    }
  };

  /** Signs the request `csr` with the test CA into the PEM `out`, with keytool extensions. */
  const signWithCa = (csr: string, out: string, extensions: string[]): Promise<void> =>
    tool([
      '-gencert',
      '-rfc',
      '-alias',
      'ca',
      '-keystore',
      caStore,
      '-infile',
      csr,
      '-outfile',
      out,
      ...extensions.flatMap((e) => ['-ext', e]),
      '-validity',
      '825',
    ]);

  if (!existsSync(caStore)) {
    log?.(`making a test CA in ${dir} (keytool)`);
    await tool([
      '-genkeypair',
      '-alias',
      'ca',
      '-keyalg',
      'EC',
      '-groupname',
      'secp256r1',
      '-dname',
      'CN=scylla-loader local test CA',
      '-ext',
      'bc:c',
      '-validity',
      '3650',
      '-keystore',
      caStore,
    ]);
    await tool(['-exportcert', '-rfc', '-alias', 'ca', '-keystore', caStore, '-file', caFile]);
  }

  const current = existsSync(sansFile) ? (await readFile(sansFile, 'utf8')).trim() : undefined;
  if (!existsSync(keystoreFile) || current !== sans) {
    log?.(`making the node certificate for ${sans} in ${dir} (keytool)`);
    await rm(keystoreFile, { force: true });
    const csr = path.join(dir, 'node.csr');
    const cert = path.join(dir, 'node.pem');
    await tool([
      '-genkeypair',
      '-alias',
      'node',
      '-keyalg',
      'EC',
      '-groupname',
      'secp256r1',
      '-dname',
      'CN=scylla-loader local node',
      '-validity',
      '825',
      '-keystore',
      keystoreFile,
    ]);
    await tool(['-certreq', '-alias', 'node', '-keystore', keystoreFile, '-file', csr]);
    await signWithCa(csr, cert, [`san=${sans}`, 'eku=serverAuth,clientAuth']);
    // The signed certificate replaces the self-signed one only once keytool can chain it to a
    // trusted CA in the same store.
    await tool(['-importcert', '-alias', 'ca', '-keystore', keystoreFile, '-file', caFile]);
    await tool(['-importcert', '-alias', 'node', '-keystore', keystoreFile, '-file', cert]);
    await rm(csr, { force: true });
    await writeFile(sansFile, `${sans}\n`);
  }
  if (!options.clientAuth) return { caFile, keystoreFile, keystorePassword };

  // Client auth: the nodes trust the test CA for client certificates, and the folder keeps one
  // client certificate for the loader and the tools. keytool cannot write a private key as
  // PEM, which is what clients take, so openssl makes the key and its request; keytool signs it
  // with the CA as it signed the node's.
  const truststoreFile = path.join(dir, 'truststore.p12');
  const client = devClientCertFiles(stateDir);
  if (!existsSync(truststoreFile)) {
    await tool(['-importcert', '-alias', 'ca', '-keystore', truststoreFile, '-file', caFile]);
  }
  if (!existsSync(client.certFile) || !existsSync(client.keyFile)) {
    log?.(`making a client certificate in ${dir} (openssl, keytool)`);
    const csr = path.join(dir, 'client.csr');
    await openssl([
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      client.keyFile,
      '-out',
      csr,
      '-subj',
      '/CN=scylla-loader local client',
    ]);
    await signWithCa(csr, client.certFile, ['eku=clientAuth']);
    await rm(csr, { force: true });
  }
  return {
    caFile,
    keystoreFile,
    keystorePassword,
    truststoreFile,
    clientCertFile: client.certFile,
    clientKeyFile: client.keyFile,
  };
}

/** Runs the `openssl` CLI; its own output names the problem when it fails. */
async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (err) {
    const e = err as { stderr?: string; code?: unknown; message: string };
    const detail =
      e.code === 'ENOENT'
        ? 'openssl is not installed (apt-get install openssl)'
        : (e.stderr || e.message).trim().split('\n').slice(0, 5).join('\n');
    throw new LoaderError(
      'FAILED_PRECONDITION',
      `openssl ${args[0]} failed while making the local cluster's client certificate: ${detail}`,
      { cause: err },
    );
  }
}

/** The `keytool` of the JDK whose `java` runs the nodes, or the one on PATH. */
function keytoolBeside(java: string): string {
  if (!path.isAbsolute(java)) return 'keytool';
  const beside = path.join(path.dirname(java), 'keytool');
  return existsSync(beside) ? beside : 'keytool';
}
