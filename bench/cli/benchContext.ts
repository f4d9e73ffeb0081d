import path from 'node:path';
import type { DbConfig } from '../../src/core/index.js';
import { localClusterStatus, startLocalCluster } from '../../src/devdb/index.js';
import { benchStateDir } from '../../test/support/index.js';
import { createProgress, dbConfigFromFlags, type DbFlags } from '../../src/cli/index.js';
import type { BenchProgressFactory } from '../stream/StreamBenchOptions.js';

/** What a `bench` command works with. */
export interface BenchContext {
  db: DbConfig;
  /** Pid of the local single node (its CPU seconds, pinning); undefined for another cluster. */
  dbPid: number | undefined;
  /** The repository's `.state` folder. */
  stateRoot: string;
  progress: BenchProgressFactory;
  log: (line: string) => void;
  /** Aborted by SIGINT or SIGTERM, so the benchmark ends its children before exiting. */
  signal: AbortSignal;
}

/**
 * Runs a benchmark with its context: the database of the flags or, when none is named, the
 * local development node (started or reused), progress bars and status lines on stderr, and
 * a signal that SIGINT/SIGTERM abort. `adjustDb` may change the settings the flags gave;
 * `database` false: a benchmark with a node of its own, the local node left alone. `on`, not
 * `once`: tsx relays a Ctrl-C as a second SIGINT, which without a listener would kill the
 * process before its children are ended.
 */
export async function withBenchContext<T>(
  flags: DbFlags,
  body: (context: BenchContext) => Promise<T>,
  adjustDb: (db: DbConfig) => void = () => undefined,
  database = true,
): Promise<T> {
  const db = dbConfigFromFlags(flags);
  adjustDb(db);
  let dbPid: number | undefined;
  if (database && !flags.contactPoints && !process.env.SCYLLA_LOADER_CONTACT_POINTS) {
    const cluster = await startLocalCluster({
      stateDir: benchStateDir,
      log: (line) => process.stderr.write(`  ${line}\n`),
    });
    db.contactPoints = cluster.contactPoints;
    db.port = cluster.port;
    const { nodes } = await localClusterStatus(benchStateDir);
    if (nodes.length === 1) dbPid = nodes[0]!.pid ?? undefined;
  }
  const abort = new AbortController();
  const onSignal = (): void => abort.abort();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    return await body({
      db,
      dbPid,
      stateRoot: path.dirname(benchStateDir),
      progress: (label, total, unit) => createProgress(label, total, { unit }),
      log: (line) => process.stderr.write(`${line}\n`),
      signal: abort.signal,
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
