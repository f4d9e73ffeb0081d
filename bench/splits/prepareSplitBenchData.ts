import cassandra from 'cassandra-driver';
import pMap from 'p-map';
import {
  datasetNamespace,
  ensureDatasetSchema,
  readDatasetInfo,
  refreshDatasetCounts,
  sampleId,
} from '../../src/core/index.js';

/** Shape of the synthetic ImageNet-sized metadata set. */
export interface SplitBenchShape {
  rows: number;
  classes: number;
  /** Group sizes are uniform in [1, maxGroup]. */
  maxGroup: number;
}

/**
 * Writes a metadata-only synthetic set (no sample bytes: splits read only metadata) of
 * `rows` rows with `group_id` and `label`: groups of 1 to `maxGroup` samples, each group drawn
 * mostly (80%) from one class and otherwise from any class, so labels correlate within a
 * group as they do within a patient or a photographer. Deterministic; skipped when the dataset
 * already holds that many rows.
 */
export async function prepareSplitBenchData(
  client: cassandra.Client,
  dataset: string,
  shape: SplitBenchShape,
  onProgress: (done: number, total: number) => void,
): Promise<{ reused: boolean }> {
  await ensureDatasetSchema(client, {
    dataset,
    replication: { class: 'SimpleStrategy', replicationFactor: 1 },
    columns: [{ name: 'group_id', type: 'text' }],
  });
  const info = await readDatasetInfo(client, dataset);
  if (info.sampleCount === shape.rows) return { reused: true };

  let state = 12345;
  const rand = (): number => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
  const ns = datasetNamespace(dataset);
  const insert = `INSERT INTO ${dataset}.metadata (id, label, source_key, size_bytes, group_id) VALUES (?, ?, ?, ?, ?)`;
  // A generator, not an array: rows are drawn in order from one random stream, so the set is
  // deterministic, and only as fast as the writes take them, so they are never all in memory.
  function* rowsToWrite(): Generator<unknown[]> {
    let group = 0;
    let inGroup = 0;
    let groupSize = 0;
    let primary = 0;
    for (let row = 0; row < shape.rows; row++) {
      if (inGroup >= groupSize) {
        group++;
        inGroup = 0;
        groupSize = 1 + Math.floor(rand() * shape.maxGroup);
        primary = Math.floor(rand() * shape.classes);
      }
      inGroup++;
      const label = rand() < 0.8 ? primary : Math.floor(rand() * shape.classes);
      const key = `synthetic/${row}`;
      yield [sampleId(key, ns), label, key, 110_000, `g${group}`];
    }
  }
  let done = 0;
  await pMap(
    rowsToWrite(),
    async (params) => {
      await client.execute(insert, params, {
        prepare: true,
        consistency: cassandra.types.consistencies.localOne,
      });
      if (++done % 5000 === 0) onProgress(done, shape.rows);
    },
    { concurrency: 128 },
  );
  onProgress(done, shape.rows);
  await refreshDatasetCounts(client, dataset);
  return { reused: false };
}
