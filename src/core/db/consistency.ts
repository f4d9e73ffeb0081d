import cassandra from 'cassandra-driver';
import { z } from 'zod';

/** The driver's consistency codes by CQL name (`localQuorum` → `LOCAL_QUORUM`). */
const CODES = new Map<string, number>(
  Object.entries(cassandra.types.consistencies).map(([key, code]) => [
    key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase(),
    code as number,
  ]),
);
const NAMES = new Map<number, string>([...CODES].map(([name, code]) => [code, name]));

/**
 * Consistency levels a write may use. `ANY` is left out: it acknowledges a write no replica
 * has stored (a hint only), which breaks the ingest's promise that a listed sample has its data
 * row. `EACH_QUORUM` needs NetworkTopologyStrategy replication.
 */
export const WRITE_CONSISTENCIES = [
  'LOCAL_ONE',
  'ONE',
  'TWO',
  'THREE',
  'LOCAL_QUORUM',
  'QUORUM',
  'EACH_QUORUM',
  'ALL',
] as const;

/** Consistency levels a read may use (`ANY` and `EACH_QUORUM` are for writes only). */
export const READ_CONSISTENCIES = [
  'LOCAL_ONE',
  'ONE',
  'TWO',
  'THREE',
  'LOCAL_QUORUM',
  'QUORUM',
  'ALL',
] as const;

/** A consistency level by its CQL name. */
export type ConsistencyName = (typeof WRITE_CONSISTENCIES)[number];

/** The consistency settings of {@link DbConfig}, one per kind of query. */
export type ConsistencySetting = 'writeConsistency' | 'readConsistency' | 'sampleReadConsistency';

/**
 * Names of the driver execution profiles `createDbClient` makes, one per kind of query with a
 * consistency of its own. A query that names none runs under the default profile, whose
 * consistency is `readConsistency` (metadata, dataset info, splits; schema statements ignore
 * it). Queries pick a profile instead of a level, so the level is set in one place.
 */
export const QUERY_PROFILES = {
  /** Ingest and split writes: `writeConsistency`. */
  write: 'write',
  /** Sample reads of the fetch engine (hedged and retried): `sampleReadConsistency`. */
  sampleRead: 'sampleRead',
} as const;

/** Schema of a write consistency setting. */
export const writeConsistencySchema = z.enum(WRITE_CONSISTENCIES);
/** Schema of a read consistency setting. */
export const readConsistencySchema = z.enum(READ_CONSISTENCIES);

/** The driver's code of a consistency level. */
export function driverConsistency(name: ConsistencyName): number {
  const code = CODES.get(name);
  if (code === undefined) throw new Error(`unknown consistency level ${name}`);
  return code;
}

/**
 * The consistency level a driver error names (replicas unavailable, or too few of them
 * answering in time), as its CQL name; undefined for any other error. A `NoHostAvailableError`
 * is looked into: the driver's retry policy tries the next host on an unavailable answer, and
 * with none left reports the answers it had that way.
 */
export function consistencyOfError(err: unknown): string | undefined {
  if (err instanceof cassandra.errors.NoHostAvailableError) {
    for (const inner of Object.values(err.innerErrors as Record<string, unknown>)) {
      const level = consistencyOfError(inner);
      if (level !== undefined) return level;
    }
    return undefined;
  }
  if (!(err instanceof cassandra.errors.ResponseError)) return undefined;
  const level = (err as { consistencies?: unknown }).consistencies;
  if (typeof level !== 'number') return undefined;
  return NAMES.get(level);
}

/**
 * What to add to the message of a database error that names a consistency level: which of the
 * settings asks for that level, named as the caller's command names them (`settingNames`), so a
 * person reading "not enough replicas" knows which setting to lower. Empty when the error names
 * no level, or none of the settings has it (the cause is then elsewhere). The cause chain of a
 * `LoaderError` is followed.
 */
export function consistencyHint(
  err: unknown,
  levels: Record<ConsistencySetting, string>,
  settingNames: Record<ConsistencySetting, string>,
): string {
  let level: string | undefined;
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 5; depth++) {
    level = consistencyOfError(e);
    if (level !== undefined) break;
    e = (e as { cause?: unknown } | null)?.cause;
  }
  if (level === undefined) return '';
  const settings = (Object.keys(settingNames) as ConsistencySetting[]).filter(
    (s) => levels[s] === level,
  );
  if (settings.length === 0) return '';
  return `; consistency ${level} is set by ${settings.map((s) => settingNames[s]).join(' and ')}`;
}
