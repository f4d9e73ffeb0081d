import type { TestProject } from 'vitest/node';
import { defaultStateDir } from '../../src/devdb/index.js';
import { startLocalCluster } from '../../src/devdb/index.js';
import { dbConfigFromEnv } from '../../src/cli/index.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The cluster the integration tests run against (see `dbHelpers.ts`). */
    db: { contactPoints: string[]; port: number; localDataCenter: string };
  }
}

/**
 * Integration tests run against `SCYLLA_LOADER_CONTACT_POINTS` when set (e.g. a ScyllaDB),
 * otherwise against the shared local Cassandra node of `scylla-loader db start`, started here
 * if it is not running yet.
 *
 * There is deliberately no teardown: the node outlives the run, so the next run (and the CLI)
 * reuses it within a second instead of paying a JVM start of half a minute. Tests isolate
 * themselves with keyspaces of their own, not with a fresh node. `scylla-loader db stop`
 * ends it.
 */
export default async function setup(project: TestProject): Promise<void> {
  const config = dbConfigFromEnv();
  if (config.contactPoints.length > 0) {
    project.provide('db', {
      contactPoints: config.contactPoints,
      port: config.port,
      localDataCenter: config.localDataCenter,
    });
    return;
  }
  const started = Date.now();
  const cluster = await startLocalCluster({
    stateDir: defaultStateDir(),
    log: (line) => console.log(`[db] ${line}`),
  });
  if (!cluster.reused) {
    console.log(`[db] local Cassandra ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  project.provide('db', {
    contactPoints: cluster.contactPoints,
    port: cluster.port,
    localDataCenter: cluster.localDataCenter,
  });
}
