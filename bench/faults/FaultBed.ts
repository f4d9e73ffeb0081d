import type cassandra from 'cassandra-driver';
import type { DbConfig } from '../../src/core/index.js';
import type { FaultDataset } from './prepareFaultDataset.js';

/**
 * Where fault scenarios run: the database the loaders read from, the checker's own driver
 * client to it (for the ground truth), the dataset, and for the node faults the local ring's
 * state folder.
 *
 * @internal
 */
export interface FaultBed {
  /** How loaders reach the database. */
  db: DbConfig;
  /** The checker's client of the same database (reads the split's ids). */
  client: cassandra.Client;
  data: FaultDataset;
  /** State folder of the local ring whose nodes the node scenarios stop and hang. */
  ringStateDir?: string;
  /** Path of `toxiproxy-server`, for the network scenarios. */
  toxiproxy?: string;
  /** Receives every process started (loaders, toxiproxy), so a caller can reap them. */
  onSpawn?: (pid: number) => void;
  log: (line: string) => void;
}
