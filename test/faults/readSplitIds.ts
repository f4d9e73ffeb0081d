import cassandra from 'cassandra-driver';

const { consistencies } = cassandra.types;

/**
 * Reads the ids of a stored split `set/part` (latest version) straight from the database, as
 * the fault checker's ground truth: the part's packed 16-byte ids from `split_chunks`, found
 * through the set's info row in `split_sets` (which names the write id and chunks). Written
 * against the tables, not the loader's split code, so a bug there cannot hide from the check.
 * Reads at QUORUM, so a replica that missed a write cannot shrink the expectation.
 *
 * @internal
 */
export async function readSplitIds(
  client: cassandra.Client,
  dataset: string,
  split: string,
): Promise<Set<string>> {
  if (!/^[a-z][a-z0-9_]{0,47}$/.test(dataset)) {
    throw new Error(`not a dataset name: ${dataset}`);
  }
  const options = { prepare: true, consistency: consistencies.quorum, fetchSize: 5000 };
  const [, set, part] = /^([^/]+)\/(.+)$/.exec(split) ?? [];
  if (!set || !part) throw new Error(`not a split name: ${split} (set/part)`);
  const infoRows = await client.execute(
    `SELECT info FROM ${dataset}.split_sets WHERE name = ? LIMIT 1`,
    [set],
    options,
  );
  const infoText = infoRows.first()?.['info'] as string | undefined;
  if (!infoText) throw new Error(`split set ${set} of ${dataset} not found`);
  const info = JSON.parse(infoText) as {
    version: number;
    writeId: string;
    parts: { name: string; chunks: number; size: number }[];
  };
  const stored = info.parts.find((p) => p.name === part);
  if (!stored) throw new Error(`split set ${set} has no part ${part}`);
  const ids = new Set<string>();
  for (let chunk = 0; chunk < stored.chunks; chunk++) {
    const rs = await client.execute(
      `SELECT ids FROM ${dataset}.split_chunks ` +
        'WHERE name = ? AND version = ? AND write_id = ? AND part = ? AND chunk = ?',
      [set, info.version, info.writeId, part, chunk],
      options,
    );
    const packed = rs.first()?.['ids'] as Buffer | undefined;
    if (!packed) throw new Error(`chunk ${chunk} of ${split} is missing`);
    for (let o = 0; o + 16 <= packed.length; o += 16) ids.add(packed.toString('hex', o, o + 16));
  }
  if (ids.size !== stored.size) {
    throw new Error(`${split}: the info row says ${stored.size} ids, the chunks hold ${ids.size}`);
  }
  return ids;
}
