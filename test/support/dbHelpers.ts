import { randomBytes } from 'node:crypto';
import type cassandra from 'cassandra-driver';
import { inject } from 'vitest';
import type { DbConfig } from '../../src/core/index.js';
import { dbConfigFromEnv } from '../../src/cli/index.js';

/**
 * Database settings for the cluster the global setup provided. Credentials still come from the
 * environment, so the tests run unchanged against a ScyllaDB that requires them.
 */
export function testDbConfig(): DbConfig {
  const db = inject('db');
  return dbConfigFromEnv(process.env, {
    contactPoints: db.contactPoints,
    port: db.port,
    localDataCenter: db.localDataCenter,
  });
}

/**
 * A keyspace name no other test (or earlier run) uses: `t_` and 16 random hex digits. Tests
 * share one long-lived node, so isolation comes from names, not from a fresh database.
 */
export function uniqueKeyspace(): string {
  return `t_${randomBytes(8).toString('hex')}`;
}

/**
 * Creates a fresh keyspace (SimpleStrategy, replication factor 1 unless told otherwise) and
 * returns its name; pair it with {@link dropKeyspace} in the test's teardown.
 */
export async function createTestKeyspace(
  client: cassandra.Client,
  replicationFactor = 1,
): Promise<string> {
  const name = uniqueKeyspace();
  await client.execute(
    `CREATE KEYSPACE ${name} WITH replication = ` +
      `{'class': 'SimpleStrategy', 'replication_factor': ${replicationFactor}}`,
  );
  return name;
}

/** Drops a test keyspace; a keyspace that is already gone is fine. */
export async function dropKeyspace(client: cassandra.Client, name: string): Promise<void> {
  if (!/^[a-z][a-z0-9_]{0,47}$/.test(name)) {
    // Names are spliced into CQL: refuse anything that is not a plain identifier.
    throw new Error(`not a test keyspace name: ${name}`);
  }
  await client.execute(`DROP KEYSPACE IF EXISTS ${name}`);
}

/** Every row a query returns, page after page (1,000 rows a page). */
export async function selectAll(
  client: cassandra.Client,
  query: string,
  params: unknown[] = [],
): Promise<cassandra.types.Row[]> {
  const rows: cassandra.types.Row[] = [];
  let pageState: string | undefined;
  do {
    const rs = await client.execute(query, params, { prepare: true, fetchSize: 1000, pageState });
    rows.push(...rs.rows);
    pageState = rs.pageState ?? undefined;
  } while (pageState);
  return rows;
}
