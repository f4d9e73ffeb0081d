import { startLocalCluster, stopLocalCluster } from '../../src/devdb/index.js';
import type { ColdStartRecord } from './IngestBenchReport.js';

/**
 * Stops the local cluster in `stateDir` and times its start back to serving CQL, `count`
 * times. Jars are cached after the first start ever, so this is the JVM and Cassandra start
 * alone (a drained stop leaves no commit log to replay). Whatever happens, the cluster is
 * started again before returning: other tools and test runs expect the shared node to be up.
 * @internal
 */
export async function measureColdStarts(
  stateDir: string,
  count: number,
  options: { log?: (line: string) => void; signal?: AbortSignal } = {},
): Promise<ColdStartRecord[]> {
  const runs: ColdStartRecord[] = [];
  try {
    for (let run = 1; run <= count; run++) {
      options.signal?.throwIfAborted();
      const t0 = performance.now();
      const { stopped } = await stopLocalCluster(stateDir);
      const t1 = performance.now();
      if (stopped === 0) throw new Error(`no local node runs in ${stateDir}; nothing to restart`);
      await startLocalCluster({ stateDir });
      const t2 = performance.now();
      const record = { run, stopSeconds: (t1 - t0) / 1000, startSeconds: (t2 - t1) / 1000 };
      runs.push(record);
      options.log?.(
        `cold start ${run}/${count}: stop ${record.stopSeconds.toFixed(1)} s, start to CQL ` +
          `${record.startSeconds.toFixed(1)} s`,
      );
    }
  } finally {
    // Reuses the node when the loop ended normally; restarts it after a failure mid-cycle.
    await startLocalCluster({ stateDir });
  }
  return runs;
}
