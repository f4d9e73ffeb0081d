import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import cassandra from 'cassandra-driver';
import { LoaderError } from '../core/index.js';
import { type DevAccess, devDriverOptions } from './waitForCluster.js';

/** The role a cluster started with `--auth` makes for clients. @internal */
export const DEV_ROLE = 'loader';

/** Cassandra's default superuser, which exists on every node with PasswordAuthenticator. */
const SUPERUSER = { username: 'cassandra', password: 'cassandra' };

/**
 * Superuser access to a local cluster, for the start-up checks only.
 *
 * @internal
 */
export function superuserAccess(): DevAccess {
  return { credentials: SUPERUSER };
}

/** Where the password of {@link DEV_ROLE} is kept. @internal */
export function devPasswordFile(stateDir: string): string {
  return path.join(stateDir, 'auth', `${DEV_ROLE}.password`);
}

/**
 * Makes sure the login role {@link DEV_ROLE} exists with the password kept in
 * `<stateDir>/auth/loader.password` (random, made once, readable by the owner only): a
 * password clients read from a file, as they would from a mounted Secret, and distinctive
 * enough that tests can check it never appears in any output.
 *
 * @internal
 */
export async function ensureDevRole(
  stateDir: string,
  contactPoints: string[],
  port: number,
  tls: Pick<DevAccess, 'ca' | 'clientCert'>,
): Promise<{ username: string; passwordFile: string }> {
  const passwordFile = devPasswordFile(stateDir);
  if (!existsSync(passwordFile)) {
    await mkdir(path.dirname(passwordFile), { recursive: true, mode: 0o700 });
    await writeFile(passwordFile, `${randomBytes(18).toString('base64url')}\n`, { mode: 0o600 });
  }
  const password = (await readFile(passwordFile, 'utf8')).trim();
  const credentials = { username: DEV_ROLE, password };
  const connect = async (access: DevAccess): Promise<cassandra.Client> => {
    const client = new cassandra.Client({
      contactPoints,
      localDataCenter: 'datacenter1',
      protocolOptions: { port },
      ...devDriverOptions(access),
    });
    try {
      await client.connect();
    } catch (err) {
      await client.shutdown().catch(() => undefined);
      throw err;
    }
    return client;
  };
  try {
    // Already there with this password (a restart): nothing to do. Cassandra also refuses to
    // change a password twice within 5 s, so changing it blindly at every start would fail.
    await (await connect({ ...tls, credentials })).shutdown();
    return { username: DEV_ROLE, passwordFile };
  } catch {
    // Missing, or made with a password file deleted since: set it up as the superuser.
  }
  try {
    const admin = await connect({ ...superuserAccess(), ...tls });
    try {
      const existing = await admin.execute('SELECT role FROM system_auth.roles WHERE role = ?', [
        DEV_ROLE,
      ]);
      // Role statements take no bind markers; base64url holds no quote to escape.
      await admin.execute(
        existing.rowLength === 0
          ? `CREATE ROLE ${DEV_ROLE} WITH PASSWORD = '${password}' AND LOGIN = true`
          : `ALTER ROLE ${DEV_ROLE} WITH PASSWORD = '${password}'`,
      );
    } finally {
      await admin.shutdown().catch(() => undefined);
    }
  } catch (err) {
    // The driver's messages name roles, never passwords.
    throw new LoaderError(
      'UNAVAILABLE',
      `cannot make the login role ${DEV_ROLE} on the local cluster in ${stateDir}: ` +
        `${(err as Error).message}`,
      { cause: err },
    );
  }
  return { username: DEV_ROLE, passwordFile };
}
