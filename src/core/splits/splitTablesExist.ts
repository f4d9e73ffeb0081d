import type cassandra from 'cassandra-driver';

/**
 * True when the dataset has its split tables. Datasets made before split sets existed lack
 * them; the read-only RPCs check instead of creating them, so a role without CREATE
 * permission can still describe and list.
 *
 * @internal
 */
export async function splitTablesExist(
  client: cassandra.Client,
  dataset: string,
): Promise<boolean> {
  const rs = await client.execute(
    'SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name IN ?',
    [dataset, ['split_sets', 'split_chunks']],
    { prepare: true },
  );
  return rs.rowLength === 2;
}
