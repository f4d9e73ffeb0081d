import { randomUUID } from 'node:crypto';
import type cassandra from 'cassandra-driver';
import pMap from 'p-map';
import { QUERY_PROFILES } from '../db/consistency.js';
import { LoaderError, notFound } from '../errors/LoaderError.js';
import type { SplitSetInfo } from './SplitSetInfo.js';

/** Ids per stored chunk: 1 MiB of packed UUIDs, so a part of 10^8 ids is read in pieces. */
export const IDS_PER_CHUNK = 65_536;

/** Creates the split tables of a dataset if absent (datasets made before splits lack them). */
export async function ensureSplitTables(client: cassandra.Client, dataset: string): Promise<void> {
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${dataset}.split_sets (name text, version int, info text, ` +
      'created_at timestamp, PRIMARY KEY (name, version)) WITH CLUSTERING ORDER BY (version DESC)',
  );
  await client.execute(
    `CREATE TABLE IF NOT EXISTS ${dataset}.split_chunks (name text, version int, write_id uuid, ` +
      'part text, chunk int, ids blob, PRIMARY KEY ((name, version, write_id, part, chunk)))',
  );
}

/**
 * Stores a split set: every part's ids in chunks first, the info row last and only if no set
 * of that name and version exists (a lightweight transaction), so a crash or a concurrent
 * writer never leaves a visible half-written set. Chunks are keyed by a fresh write id, so a
 * writer that loses the race never overwrites the winner's chunks.
 */
export async function writeSplitSet(
  client: cassandra.Client,
  dataset: string,
  set: Omit<SplitSetInfo, 'writeId' | 'parts'> & {
    parts: Array<Omit<SplitSetInfo['parts'][number], 'chunks'> & { ids: Buffer }>;
  },
  signal?: AbortSignal,
): Promise<SplitSetInfo> {
  const writeId = randomUUID();
  const insert =
    `INSERT INTO ${dataset}.split_chunks (name, version, write_id, part, chunk, ids) ` +
    'VALUES (?, ?, ?, ?, ?, ?)';
  const writes: Array<[string, number, Buffer]> = [];
  const parts = set.parts.map(({ ids, ...part }) => {
    const chunks = Math.ceil(ids.length / 16 / IDS_PER_CHUNK);
    for (let c = 0; c < chunks; c++) {
      writes.push([
        part.name,
        c,
        ids.subarray(c * IDS_PER_CHUNK * 16, (c + 1) * IDS_PER_CHUNK * 16),
      ]);
    }
    return { ...part, chunks };
  });
  // An abort stops issuing writes at once; chunks already written stay invisible, as no info
  // row points at their write id.
  await pMap(
    writes,
    async ([part, chunk, ids]) => {
      await client.execute(insert, [set.name, set.version, writeId, part, chunk, ids], {
        prepare: true,
        executionProfile: QUERY_PROFILES.write,
      });
    },
    { concurrency: 8, signal },
  );

  // A caller that gave up must not find the set stored (it would get ALREADY_EXISTS on retry).
  signal?.throwIfAborted();
  const info: SplitSetInfo = { ...set, parts, writeId };
  const rs = await client.execute(
    `INSERT INTO ${dataset}.split_sets (name, version, info, created_at) VALUES (?, ?, ?, ?) ` +
      'IF NOT EXISTS',
    [
      set.name,
      set.version,
      JSON.stringify(info, (_, v) => (typeof v === 'bigint' ? String(v) : v)),
      set.createdAt,
    ],
    { prepare: true, executionProfile: QUERY_PROFILES.write },
  );
  if (!rs.first()['[applied]']) {
    throw new LoaderError(
      'ALREADY_EXISTS',
      `split set ${set.name} version ${set.version} was written by someone else meanwhile; ` +
        'ask for a new version',
    );
  }
  return info;
}

/** Latest stored version of a split set, or 0 when there is none. */
export async function latestSplitVersion(
  client: cassandra.Client,
  dataset: string,
  name: string,
): Promise<number> {
  const rs = await client.execute(
    `SELECT version FROM ${dataset}.split_sets WHERE name = ? LIMIT 1`,
    [name],
    { prepare: true },
  );
  return (rs.first()?.['version'] as number | undefined) ?? 0;
}

/** Reads a split set's info row (the latest version when none is given); NOT_FOUND if absent. */
export async function readSplitSetInfo(
  client: cassandra.Client,
  dataset: string,
  name: string,
  version?: number,
): Promise<SplitSetInfo> {
  const rs = await client.execute(
    version === undefined
      ? `SELECT info FROM ${dataset}.split_sets WHERE name = ? LIMIT 1`
      : `SELECT info FROM ${dataset}.split_sets WHERE name = ? AND version = ?`,
    version === undefined ? [name] : [name, version],
    { prepare: true },
  );
  const row = rs.first();
  if (!row) {
    const which = version === undefined ? '' : ` version ${version}`;
    throw notFound(
      `split set ${name}${which} of dataset ${dataset} does not exist; see \`splits list ${dataset}\``,
    );
  }
  return parseInfo(String(row['info']));
}

/** Every stored split set of a dataset, every version, newest first within a name. */
export async function listSplitSets(
  client: cassandra.Client,
  dataset: string,
): Promise<SplitSetInfo[]> {
  const sets: SplitSetInfo[] = [];
  let pageState: string | undefined;
  do {
    const rs = await client.execute(`SELECT info FROM ${dataset}.split_sets`, [], {
      prepare: true,
      fetchSize: 1000,
      pageState,
    });
    for (const r of rs.rows) sets.push(parseInfo(String(r['info'])));
    pageState = rs.pageState ?? undefined;
  } while (pageState);
  return sets.sort((a, b) => a.name.localeCompare(b.name) || b.version - a.version);
}

/**
 * Reads a stored part's ids, chunk by chunk, as one packed buffer; no chunk is asked for once
 * `signal` has fired (it rejects with the signal's reason).
 */
export async function readPartIds(
  client: cassandra.Client,
  dataset: string,
  info: SplitSetInfo,
  part: string,
  signal?: AbortSignal,
): Promise<Buffer> {
  const meta = info.parts.find((p) => p.name === part);
  if (!meta) {
    throw notFound(
      `split set ${info.name}@${info.version} has no part ${part}; its parts: ` +
        info.parts.map((p) => p.name).join(', '),
    );
  }
  const query =
    `SELECT ids FROM ${dataset}.split_chunks WHERE name = ? AND version = ? AND write_id = ? ` +
    'AND part = ? AND chunk = ?';
  // A few chunks at a time: a part of 10^8 ids has about 1,500 of them. Each chunk is copied
  // into its place in one buffer as it arrives, so the driver's response (which the chunk is a
  // view of) is freed at once instead of every chunk being held until a final join.
  if (meta.chunks !== Math.ceil(meta.size / IDS_PER_CHUNK)) {
    throw new LoaderError(
      'DATA_LOSS',
      `part ${part} of split set ${info.name} lists ${meta.chunks} chunks for ${meta.size} ids`,
    );
  }
  const ids = Buffer.allocUnsafe(meta.size * 16);
  const chunkBytes = IDS_PER_CHUNK * 16;
  await pMap(
    Array.from({ length: meta.chunks }, (_, c) => c),
    async (c) => {
      signal?.throwIfAborted();
      const rs = await client.execute(query, [info.name, info.version, info.writeId, part, c], {
        prepare: true,
      });
      const chunk = rs.first()?.['ids'] as Buffer | undefined;
      if (!chunk) {
        throw new LoaderError(
          'DATA_LOSS',
          `chunk ${c} of part ${part} of split set ${info.name}@${info.version} is missing; ` +
            'create the split set again as a new version',
        );
      }
      const expected = Math.min(chunkBytes, ids.length - c * chunkBytes);
      if (chunk.length !== expected) {
        throw new LoaderError(
          'DATA_LOSS',
          `chunk ${c} of part ${part} of split set ${info.name} holds ${chunk.length / 16} ids, ` +
            `not ${expected / 16}`,
        );
      }
      chunk.copy(ids, c * chunkBytes);
    },
    { concurrency: 16, ...(signal ? { signal } : {}) },
  );
  return ids;
}

function parseInfo(text: string): SplitSetInfo {
  const raw = JSON.parse(text) as SplitSetInfo & { seed: string; createdAt: string };
  return { ...raw, seed: BigInt(raw.seed), createdAt: new Date(raw.createdAt) };
}
