import type { DbConfig } from '../../src/core/index.js';
import { startToxiproxy, type Toxiproxy } from '../latency/toxiproxy.js';
import type { FaultBed } from './FaultBed.js';

/** Toxiproxy in front of the database (`db`) and, once asked, of a loader (`front`). @internal */
export interface FaultProxies {
  toxiproxy: Toxiproxy;
  /** The database as the loaders see it: through the `db` proxy. */
  db: DbConfig;
  /** Creates the `front` proxy to `upstream` (a loader); resolves to its address. */
  front(upstream: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Starts toxiproxy with a `db` proxy to the bed's (single) database node. One node only: the
 * driver would find a ring's other nodes through `system.peers` and connect to them directly,
 * around the proxy.
 *
 * @internal
 */
export async function startFaultProxies(bed: FaultBed): Promise<FaultProxies> {
  if (!bed.toxiproxy) throw new Error('network scenarios need toxiproxy-server (bed.toxiproxy)');
  const toxiproxy = await startToxiproxy(
    bed.toxiproxy,
    bed.onSpawn ? { onSpawn: bed.onSpawn } : {},
  );
  try {
    const upstream = `${bed.db.contactPoints[0] ?? '127.0.0.1'}:${bed.db.port}`;
    const port = await toxiproxy.createProxy('db', upstream);
    return {
      toxiproxy,
      db: { ...bed.db, contactPoints: ['127.0.0.1'], port },
      front: async (loader) => `127.0.0.1:${await toxiproxy.createProxy('front', loader)}`,
      stop: () => toxiproxy.stop(),
    };
  } catch (err) {
    await toxiproxy.stop();
    throw err;
  }
}
