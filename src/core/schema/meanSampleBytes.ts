import type cassandra from 'cassandra-driver';

/**
 * The mean size of a dataset's samples, from the sample count and total bytes its ingests
 * recorded in `dataset_info`; undefined when it holds none (nothing ingested yet). One
 * single-row read; the caller caches it if it asks often.
 */
export async function meanSampleBytes(
  client: cassandra.Client,
  dataset: string,
): Promise<number | undefined> {
  const rs = await client.execute(
    `SELECT sample_count, total_bytes FROM ${dataset}.dataset_info WHERE dataset = ?`,
    [dataset],
    { prepare: true },
  );
  const row = rs.first();
  const count = Number(row?.['sample_count'] ?? 0);
  const bytes = Number(row?.['total_bytes'] ?? 0);
  return count > 0 && bytes > 0 ? bytes / count : undefined;
}
