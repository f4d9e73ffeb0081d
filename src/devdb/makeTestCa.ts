import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A certificate authority made for a test or a benchmark (gRPC TLS of `bench tls` and the
 * security tests): its PEM files and a way to issue certificates.
 */
export interface TestCa {
  /** The temporary folder holding every file of this CA and its certificates. */
  dir: string;
  /** CA certificate (PEM file). */
  certFile: string;
  keyFile: string;
  /** Issues a certificate for `commonName`; see {@link issue}. */
  issue(commonName: string, use: 'server' | 'client'): TestCert;
}

/** A certificate and its key, as PEM files and their content. */
export interface TestCert {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

/**
 * Makes a fresh CA with the `openssl` CLI, in a temporary folder (the caller removes `dir`
 * when done): test certificates are made at test time, never checked in. Keys are P-256
 * (quick to make); certificates last a day. Server certificates name `localhost` and
 * `127.0.0.1`; client ones carry clientAuth.
 */
export function makeTestCa(name: string): TestCa {
  const dir = mkdtempSync(path.join(os.tmpdir(), `sl-ca-${name}-`));
  const certFile = path.join(dir, 'ca.pem');
  const keyFile = path.join(dir, 'ca.key');
  openssl([
    'req',
    '-x509',
    ...newKey(keyFile),
    '-out',
    certFile,
    '-days',
    '1',
    '-subj',
    `/CN=${name} test CA`,
  ]);
  let serial = 0;
  return {
    dir,
    certFile,
    keyFile,
    issue(commonName, use) {
      serial += 1;
      const base = path.join(dir, `${use}-${serial}`);
      const ext = `${base}.ext`;
      writeFileSync(
        ext,
        use === 'server'
          ? 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
          : 'extendedKeyUsage=clientAuth\n',
      );
      openssl([
        'req',
        ...newKey(`${base}.key`),
        '-out',
        `${base}.csr`,
        '-subj',
        `/CN=${commonName}`,
      ]);
      openssl([
        'x509',
        '-req',
        '-in',
        `${base}.csr`,
        '-CA',
        certFile,
        '-CAkey',
        keyFile,
        '-set_serial',
        String(serial),
        '-days',
        '1',
        '-extfile',
        ext,
        '-out',
        `${base}.pem`,
      ]);
      return {
        certFile: `${base}.pem`,
        keyFile: `${base}.key`,
        cert: readFileSync(`${base}.pem`),
        key: readFileSync(`${base}.key`),
      };
    },
  };
}

function newKey(keyFile: string): string[] {
  return ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile];
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: Buffer };
    if (e.code === 'ENOENT') {
      throw new Error('the openssl CLI is needed to make test certificates; install openssl', {
        cause: err,
      });
    }
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString() ?? e.message}`, {
      cause: err,
    });
  }
}
